// The workspace's only script (no inline script anywhere; the pages work without it).
// Keys: "/" focuses search, Ctrl+K or Cmd+K opens the quick switcher (pages, and the
// documents this browser opened last).
// The collections page follows its jobs live: it reloads its live panel when
// /api/events reports a job, or polls it while a job runs if the stream is not open.
"use strict";

const RELOAD_MS = 1500;

function typing(target) {
  const tag = target && target.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
}

// The documents opened last (this browser only), offered first by the switcher.
const RECENT_KEY = "gno.recent";
const RECENT_MAX = 8;

function recentDocuments() {
  try {
    const stored = JSON.parse(window.localStorage.getItem(RECENT_KEY) || "[]");
    return Array.isArray(stored) ? stored.filter((d) => d && typeof d.uri === "string") : [];
  } catch (error) {
    return [];
  }
}

function rememberDocument() {
  const article = document.querySelector("article.doc[data-uri]");
  if (!article) return;
  const entry = { uri: article.dataset.uri, title: article.dataset.title || article.dataset.uri };
  const others = recentDocuments().filter((d) => d.uri !== entry.uri);
  try {
    window.localStorage.setItem(RECENT_KEY, JSON.stringify([entry, ...others].slice(0, RECENT_MAX)));
  } catch (error) {
    // storage full or switched off: the switcher simply lists no recent documents
  }
}

function setUpSwitcher() {
  const dialog = document.getElementById("switcher");
  const input = document.getElementById("switcher-input");
  const list = document.getElementById("switcher-list");
  if (!dialog || !input || !list) return;
  for (const doc of recentDocuments().reverse()) {
    const link = document.createElement("a");
    link.href = "/doc?uri=" + encodeURIComponent(doc.uri);
    link.textContent = String(doc.title);
    const item = document.createElement("li");
    item.className = "recent";
    item.appendChild(link);
    list.prepend(item);
  }
  const items = Array.from(list.querySelectorAll("li"));
  let chosen = 0;

  function visible() {
    return items.filter((li) => !li.hidden);
  }
  function mark() {
    visible().forEach((li, i) => li.classList.toggle("chosen", i === chosen));
  }
  function filter() {
    const text = input.value.trim().toLowerCase();
    items.forEach((li) => { li.hidden = text !== "" && !li.textContent.toLowerCase().includes(text); });
    chosen = 0;
    mark();
  }
  function open() {
    input.value = "";
    filter();
    dialog.showModal();
    input.focus();
  }
  input.addEventListener("input", filter);
  input.addEventListener("keydown", (event) => {
    const shown = visible();
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (shown.length) chosen = (chosen + (event.key === "ArrowDown" ? 1 : shown.length - 1)) % shown.length;
      mark();
    } else if (event.key === "Enter") {
      event.preventDefault();
      const text = input.value.trim();
      const link = shown.length && (text === "" || shown.length < items.length) ? shown[chosen].querySelector("a") : null;
      window.location.href = link ? link.getAttribute("href") : "/search?q=" + encodeURIComponent(text);
    }
  });
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "k") {
      event.preventDefault();
      if (dialog.open) dialog.close(); else open();
    } else if (event.key === "/" && !typing(event.target) && !dialog.open) {
      const search = document.getElementById("q");
      if (search) { event.preventDefault(); search.focus(); search.select(); }
    }
  });
}

function followJobs() {
  let panel = document.getElementById("live");
  if (!panel) return;
  let loading = false;
  async function reload() {
    if (loading) return;
    loading = true;
    try {
      const answer = await fetch("/collections/live", { credentials: "same-origin" });
      if (answer.ok) {
        const holder = document.createElement("div");
        holder.innerHTML = await answer.text();
        const fresh = holder.querySelector("#live");
        if (fresh) { panel.replaceWith(fresh); panel = fresh; }
      }
    } finally {
      loading = false;
    }
  }
  // One reload at most every RELOAD_MS: job events come as often as progress moves, and
  // every request counts against this machine's share of the server's rate limit.
  let pending = null;
  function soon() {
    if (pending === null) pending = window.setTimeout(() => { pending = null; reload(); }, RELOAD_MS);
  }
  let streaming = false;
  if (window.EventSource) {
    const events = new EventSource("/api/events");
    // Once open, one reload catches up with whatever finished before the stream began.
    events.addEventListener("open", () => { streaming = true; soon(); });
    events.addEventListener("error", () => { streaming = false; });
    events.addEventListener("job", soon);
    window.addEventListener("pagehide", () => events.close());
  }
  // Without the stream (or before it reports), ask while a job runs.
  window.setInterval(() => { if (!streaming && panel.dataset.active !== "0") reload(); }, RELOAD_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  rememberDocument();
  setUpSwitcher();
  followJobs();
});
