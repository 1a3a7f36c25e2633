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

// The instance page's step navigation (statekit/inspect/instance_page.py): the links and
// the slider's form work without this script; it adds the keys ← → and j k (follow the
// previous / next link), moves on as the slider is released, and the copy button.
(function () {
  function follow(selector) {
    const link = document.querySelector(selector);
    if (link) {
      window.location.assign(link.href);
    }
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || !document.querySelector("[data-step]")) {
      return;
    }
    const target = event.target;
    const typing =
      target instanceof HTMLElement &&
      (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) &&
      !(target instanceof HTMLInputElement && target.type === "range");
    if (typing) {
      return;
    }
    if (event.key === "ArrowLeft" || event.key === "k") {
      event.preventDefault();
      follow("[data-step-prev]");
    } else if (event.key === "ArrowRight" || event.key === "j") {
      event.preventDefault();
      follow("[data-step-next]");
    }
  });

  document.addEventListener("input", function (event) {
    const slider = event.target;
    if (slider instanceof HTMLInputElement && slider.hasAttribute("data-step-slider")) {
      const output = document.querySelector("[data-step-output]");
      const section = document.querySelector("[data-steps]");
      if (output && section) {
        output.textContent = slider.value + " of " + section.dataset.steps;
      }
    }
  });

  document.addEventListener("change", function (event) {
    const slider = event.target;
    if (slider instanceof HTMLInputElement && slider.hasAttribute("data-step-slider")) {
      slider.form.requestSubmit();
    }
  });

  document.addEventListener("click", async function (event) {
    const button = event.target instanceof Element ? event.target.closest("[data-copy-from]") : null;
    if (!button) {
      return;
    }
    const status = document.querySelector("[data-copy-status]");
    try {
      const response = await fetch(button.dataset.copyFrom, { credentials: "same-origin" });
      const text = await response.text();
      await navigator.clipboard.writeText(text);
      if (status) {
        status.textContent = "copied " + text.split("\n").filter(Boolean).length + " line(s)";
      }
    } catch (error) {
      if (status) {
        status.textContent = "could not copy: open the link and save it";
      }
    }
  });
})();

// The chart page while its analysis runs (statekit/inspect/chart_summary.py): ask again
// in a few seconds (the analysis is bounded, so this ends).
(function () {
  if (document.querySelector("[data-analysis-running]")) {
    window.setTimeout(function () {
      window.location.reload();
    }, 3000);
  }
})();

// The diagram box (figure.diagram, at most 75% of the window high) scrolls to what the
// page is about: on the instance page the states active after the selected step
// (`.after`, else `.before`), on the chart page the leaf states with instances
// (`.occupied`); again after each live redraw. The box, never the page, is scrolled.
(function () {
  function reveal() {
    for (const box of document.querySelectorAll("figure.diagram")) {
      // leaves (graphviz nodes), not the composites (clusters) around them
      const marks = box.querySelectorAll("g.node.after, g.node.occupied");
      const shown = marks.length ? marks : box.querySelectorAll("g.node.before");
      if (!shown.length) {
        continue;
      }
      const frame = box.getBoundingClientRect();
      let top = Infinity;
      let left = Infinity;
      let bottom = -Infinity;
      let right = -Infinity;
      for (const mark of shown) {
        const r = mark.getBoundingClientRect();
        top = Math.min(top, r.top);
        left = Math.min(left, r.left);
        bottom = Math.max(bottom, r.bottom);
        right = Math.max(right, r.right);
      }
      if (bottom - top > box.clientHeight || right - left > box.clientWidth) {
        fit(box, true); // they do not fit at full size: show the whole diagram instead
        continue;
      }
      // the marks' middle in the box's middle
      const y = box.scrollTop + top - frame.top;
      const x = box.scrollLeft + left - frame.left;
      const height = Math.min(bottom - top, box.clientHeight);
      const width = Math.min(right - left, box.clientWidth);
      box.scrollTop = Math.max(0, y - (box.clientHeight - height) / 2);
      box.scrollLeft = Math.max(0, x - (box.clientWidth - width) / 2);
    }
  }
  // a fitted diagram is drawn whole in the box; the button before it toggles full size
  function fit(box, fitted) {
    box.classList.toggle("fitted", fitted);
    let button = box.previousElementSibling;
    if (!button || !button.classList.contains("zoom")) {
      button = document.createElement("button");
      button.type = "button";
      button.className = "zoom";
      button.addEventListener("click", function () {
        fit(box, !box.classList.contains("fitted"));
      });
      box.before(button);
    }
    button.textContent = fitted ? "Full size" : "Fit the diagram";
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", reveal);
  } else {
    reveal();
  }
  document.addEventListener("statekit:redrawn", reveal);
})();
