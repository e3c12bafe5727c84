"""Text in the legacy encodings people's tools still write: decoded, searchable, flagged.

Each file is a few sentences encoded with Python's own codecs. After
``gno-trio update`` a search for a word of each finds its file, ``get``
returns the text as written, and a decode that was a guess is named in the
text output of ``update`` and ``status`` (not only in ``--json``). Declared
charsets (a PEP 263 cookie, an XML declaration) are honoured.
"""

from __future__ import annotations

import pytest

from tests.support.cli_support import Cli, make_cli

# file name -> (codec, text, a word of it to search for)
SAMPLES = {
    "склад.txt": (
        "cp1251",
        "Отчёт о проверке склада\n\nВчера мы провели полную инвентаризацию склада в "
        "Новосибирске. Проверено двести сорок коробок с документами, и все накладные совпали "
        "с записями в журнале. Следующая проверка назначена на конец месяца.\n",
        "инвентаризацию",
    ),
    "protokol.txt": (
        "koi8-r",
        "Протокол собрания\n\nНа собрании жильцов обсуждали ремонт крыши и замену труб в "
        "подвале. Большинство проголосовало за то, чтобы начать работы весной, когда "
        "потеплеет. Смету подготовит управляющая компания к четвергу.\n",
        "проголосовало",
    ),
    "podroz.txt": (
        "cp1250",
        "Sprawozdanie z podróży\n\nWczoraj pojechaliśmy pociągiem do Krakowa, żeby obejrzeć "
        "zamek na Wawelu. Pogoda była piękna, choć wieczorem zrobiło się chłodno. Następnym "
        "razem chcemy zwiedzić Wieliczkę i spróbować pierogów.\n",
        "pociągiem",
    ),
    "synantisi.txt": (
        "cp1253",
        "Σημειώσεις συνάντησης\n\nΣτη χθεσινή συνάντηση συζητήσαμε το χρονοδιάγραμμα του "
        "έργου και τον προϋπολογισμό για το επόμενο τρίμηνο. Η ομάδα συμφώνησε να παραδώσει "
        "την πρώτη έκδοση μέχρι το τέλος Μαρτίου.\n",
        "χρονοδιάγραμμα",
    ),
    "toplanti.txt": (
        "cp1254",
        "Toplantı notları\n\nDün yapılan toplantıda projenin takvimi ve gelecek çeyreğin "
        "bütçesi görüşüldü. Ekip, ilk sürümü mart ayının sonuna kadar teslim etmeyi kabul "
        "etti. Ayrıntılı rapor önümüzdeki hafta paylaşılacak.\n",
        "görüşüldü",
    ),
    "pgisha.txt": (
        "cp1255",
        "סיכום פגישה\n\nבפגישה אתמול דנו בלוח הזמנים של הפרויקט ובתקציב לרבעון הבא. הצוות "
        "הסכים למסור את הגרסה הראשונה עד סוף חודש מרץ, והדוח המפורט יישלח בשבוע הבא.\n",
        "הפרויקט",
    ),
    "ijtima.txt": (
        "cp1256",
        "ملخص الاجتماع\n\nناقشنا في اجتماع الأمس الجدول الزمني للمشروع والميزانية للربع "
        "القادم. وافق الفريق على تسليم النسخة الأولى بحلول نهاية شهر مارس، وسيتم إرسال "
        "التقرير المفصل الأسبوع المقبل.\n",
        "والميزانية",
    ),
    "gijiroku.txt": (
        "shift_jis",
        "会議の議事録\n\n昨日の会議では、プロジェクトのスケジュールと次の四半期の予算について"
        "話し合いました。チームは三月末までに最初の版を納品することに同意しました。\n",
        "会議の議事録",
    ),
    "jiyao.txt": (
        "gb18030",
        "会议纪要\n\n在昨天的会议上，我们讨论了项目的时间表和下个季度的预算。团队同意在三月底"
        "之前交付第一个版本。详细的报告将在下周分享给所有人。\n",
        "会议纪要",
    ),
    "hoeuirok.txt": (
        "euc-kr",
        "회의록\n\n어제 회의에서는 프로젝트 일정과 다음 분기 예산에 대해 논의했습니다. 팀은 "
        "삼월 말까지 첫 번째 버전을 전달하기로 합의했습니다. 자세한 보고서는 다음 주에 "
        "공유할 예정입니다.\n",
        "자세한",
    ),
    "notes-utf16.txt": (
        "utf-16",
        "Meeting notes\n\nYesterday we discussed the project schedule and the budget for the "
        "next quarter. The team agreed to deliver the first release by the end of March.\n",
        "quarter",
    ),
    "zametki-utf16le.txt": (
        "utf-16-le",
        "Заметки\n\nВчера мы обсуждали расписание проекта и бюджет на следующий квартал. "
        "Команда согласилась выпустить первую версию к концу марта.\n",
        "расписание",
    ),
    # Mostly ASCII with a little Russian: read as Windows-1252 by letter shape alone.
    "setup.py": (
        "cp1251",
        "import sys\n\n\ndef main() -> None:\n    # Проверяем аргументы\n"
        "    print(sys.argv)\n    print('done')\n    return None\n",
        "аргументы",
    ),
}
# Declared charsets: a few words, too few for a detector to be sure.
DECLARED = {
    "legacy.py": (
        "koi8-r",
        "# -*- coding: koi8-r -*-\nGREETING = 'Привет, ёжик'\n",
        "ёжик",
    ),
    "page.xhtml": (
        "cp1251",
        '<?xml version="1.0" encoding="windows-1251"?>\n'
        "<html><body><p>Съешь ещё этих мягких булок</p></body></html>\n",
        "булок",
    ),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Cli, str]:
    cli = make_cli(tmp_path_factory.mktemp("encodings"))
    root = cli.home / "legacy"
    root.mkdir()
    for name, (codec, text, _) in {**SAMPLES, **DECLARED}.items():
        (root / name).write_bytes(text.encode(codec))
    cli.run("init", str(root), "--name", "legacy")
    return cli, cli.run("update").stdout


@pytest.mark.parametrize("name", sorted({**SAMPLES, **DECLARED}))
def test_each_encoding_is_decoded_and_searchable(folder: tuple[Cli, str], name: str) -> None:
    cli, _ = folder
    codec, text, word = {**SAMPLES, **DECLARED}[name]
    hits = cli.json("search", word)["results"]
    assert [h["source"]["relPath"] for h in hits] == [name], codec
    content = cli.json("get", hits[0]["uri"])["content"]
    if name.endswith(".xhtml"):
        assert "Съешь ещё этих мягких булок" in content
    else:
        assert content == text


def test_a_declared_charset_is_not_a_guess(folder: tuple[Cli, str]) -> None:
    cli, _ = folder
    for name, (_, _, word) in DECLARED.items():
        (hit,) = cli.json("search", word)["results"]
        assert hit["source"]["relPath"] == name
        assert "warnings" not in hit["conversion"]


def test_guessed_encodings_are_listed_by_update_and_status(folder: tuple[Cli, str]) -> None:
    cli, update_output = folder
    guessed = sorted(n for n, (codec, _, _) in SAMPLES.items() if codec != "utf-16")
    listed = [ln for ln in update_output.splitlines() if "LOW_CONFIDENCE" in ln]
    assert sorted(ln.split(":")[0].strip(" ?") for ln in listed) == guessed
    assert any("склад.txt" in ln and "cp1251" in ln for ln in listed)
    status = cli.run("status").stdout
    for name in guessed[:10]:
        assert f"{name}: LOW_CONFIDENCE: decoded as" in status
    (collection,) = cli.json("status")["collections"]
    flagged = {w["relPath"] for w in collection["warnings"] if w["code"] == "LOW_CONFIDENCE"}
    assert flagged == set(guessed)
