// statekit inspect: live updates (statekit/inspect/live.py says how they work).
// No inline script anywhere: the Content-Security-Policy allows only this file.
"use strict";
(function () {
  const body = document.body;
  const liveUrl = body.dataset.live;
  if (!liveUrl) {
    return;
  }
  const interval = Number(body.dataset.liveInterval || 2000);
  const status = document.querySelector("[data-live-status]");
  let cursor = body.dataset.liveCursor || null;
  let busy = false;

  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }

  async function redraw() {
    const response = await fetch(window.location.href, {
      credentials: "same-origin",
      headers: { Accept: "text/html" },
    });
    if (!response.ok) {
      return false;
    }
    // DOMParser never runs scripts; the new regions are inert copies of the server's markup
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const region of document.querySelectorAll("[data-live-region][id]")) {
      const replacement = fresh.getElementById(region.id);
      if (replacement) {
        region.replaceWith(document.importNode(replacement, true));
      }
    }
    document.dispatchEvent(new CustomEvent("statekit:redrawn"));
    return true;
  }

  async function poll() {
    if (busy || document.hidden) {
      return;
    }
    busy = true;
    try {
      const response = await fetch(liveUrl, { credentials: "same-origin" });
      if (!response.ok) {
        say("live: paused (" + response.status + ")");
        return;
      }
      const answer = await response.json();
      if (answer.cursor !== cursor && (await redraw())) {
        cursor = answer.cursor;
        body.dataset.liveCursor = cursor;
      }
      say("live");
    } catch (error) {
      say("live: store unreachable");
    } finally {
      busy = false;
    }
  }

  say("live");
  window.setInterval(poll, interval);
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) {
      poll();
    }
  });
})();
