// The workspace's only script (no inline script anywhere; the pages work without it).
// Keys: "/" focuses search, Ctrl+K or Cmd+K opens the quick switcher.
// The collections page follows its jobs live: it reloads its live panel whenever
// /api/events reports a job, and polls it while a job is running.
"use strict";

function typing(target) {
  const tag = target && target.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
}

function setUpSwitcher() {
  const dialog = document.getElementById("switcher");
  const input = document.getElementById("switcher-input");
  const list = document.getElementById("switcher-list");
  if (!dialog || !input || !list) return;
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
  if (window.EventSource) {
    const events = new EventSource("/api/events");
    events.addEventListener("job", reload);
    window.addEventListener("pagehide", () => events.close());
  }
  window.setInterval(() => { if (panel.dataset.active !== "0") reload(); }, 1000);
}

document.addEventListener("DOMContentLoaded", () => {
  setUpSwitcher();
  followJobs();
});
