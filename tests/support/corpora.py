"""Small note sets that several test files index, and the engine they build.

Each set is written fresh into the test's directory with ``write_corpus``; a
set lives here once when more than one test file searches it.
"""

from __future__ import annotations

from pathlib import Path

from gno_trio.config.dirs import Dirs
from gno_trio.engine import Engine

# A two-note vault and the question one of them answers (the ask tests).
TEA_NOTES = {
    "tea.md": "# Tea\n\nGreen tea steeps at eighty degrees for two minutes.\n",
    "coffee.md": "# Coffee\n\nEspresso needs a fine grind and nine bars of pressure.\n",
}
TEA_QUESTION = "how long does green tea steep"

# Three household chores (the vectors CLI tests).
CHORE_NOTES = {
    "bread.md": "# Bread\n\nKnead the dough, let it rise, bake the loaf in a hot oven.\n",
    "bike.md": "# Bicycle\n\nPatch the inner tube and pump the tyre back up.\n",
    "garden.md": "# Garden\n\nWater the tomato seedlings every morning.\n",
}

# Five topics in four languages, one long document (several windows), a
# blank file, and a wiki link for graph expansion.
MULTILINGUAL_NOTES: dict[str, str] = {
    "cooking/bread.md": "# Baking bread\n\nKnead the dough, let it rise overnight, then bake "
    "the loaf in a hot oven until the crust is golden.\n\nSee [[garden]] for herbs.\n",
    "garden.md": "# Vegetable garden\n\nPlant tomatoes in spring, water the seedlings every "
    "morning and pull the weeds between the rows.\n",
    "de/auto.md": "# Reifenwechsel\n\nVor dem Winter die Sommerreifen abmontieren und "
    "Winterreifen mit genug Profil montieren.\n",
    "fr/finance.md": "# Épargne et budget\n\nOuvrir un compte épargne, suivre ses dépenses "
    "chaque mois et rembourser les dettes.\n",
    "es/salud.md": "# Dormir bien\n\nDormir ocho horas, evitar el café por la noche y "
    "mantener un horario regular de sueño.\n",
    "long.md": "# Astronomy notes\n\n"
    + "".join(
        f"Section {i}: the telescope mirror, the night sky, distant galaxies and stars.\n\n"
        for i in range(60)
    ),
    "blank.md": "\n\n\n",
}

# A crowd of everyday notes, one page of links that repeats a standout phrase, and one
# page about the same thing in other words (hybrid fusion: both legs must be heard).
FUSION_FILLER = {
    f"misc/note{i}.md": f"# Note {i}\n\n{topic}\n"
    for i, topic in enumerate(
        [
            "Water the tomatoes every morning and pull the weeds between the rows.",
            "Knead the dough, let it rise overnight and bake the loaf until golden.",
            "Change the winter tyres before the first frost and check the pressure.",
            "Track monthly spending and pay off the credit card in full.",
            "Sleep eight hours and avoid coffee late in the evening.",
            "Tune the guitar, practise scales slowly and record yourself.",
            "Backup the laptop weekly to an external disk and test a restore.",
            "Paint the fence in dry weather with two thin coats.",
        ]
    )
}
FUSION_NOTES = {
    **FUSION_FILLER,
    "airship-links.md": "# Airship hangar mooring links\n\n"
    + "".join(
        f"- [Airship hangar mooring mast {i}](https://example.org/airship/{i})\n" for i in range(12)
    ),
    "history/dirigibles.md": "# Rigid dirigibles\n\nThe great hydrogen-filled zeppelins "
    "crossed the Atlantic in the 1930s until the Hindenburg disaster ended passenger "
    "flights in lighter-than-air craft.\n",
}


def indexed_engine(base: Path, folder: Path, *, embed: bool) -> Engine:
    """An engine of its own under ``base`` with ``folder`` as collection ``notes``, synced
    (and embedded with the bundled model when ``embed``)."""
    engine = Engine.open(dirs=Dirs(config=base / "c", data=base / "d", cache=base / "x"))
    engine.collections.add(str(folder), name="notes")
    engine.sync()
    if embed:
        engine.vectors.embed()
    return engine
