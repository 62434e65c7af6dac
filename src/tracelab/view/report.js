// tracelab view: opens a run's timeline from the embedded data (no network, no external file).
(function () {
  "use strict";
  var RUNS = JSON.parse(document.getElementById("tl-runs").textContent);
  // a step: [idx, kind, tool, status, effect, content, [[assertion, reason], ...]]

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function badge(value) {
    return value ? el("span", {"class": "badge " + value}, [value]) : document.createTextNode("");
  }

  // content: [text, ...] where a {w: "..."} item is a withheld notice and {c: n} says n characters were clipped
  function content(parts) {
    var td = el("td", {"class": "content"});
    (parts || []).forEach(function (p) {
      if (typeof p === "string") td.appendChild(document.createTextNode(p));
      else if (p.w) td.appendChild(el("span", {"class": "withheld"}, [p.w]));
      else if (p.c) td.appendChild(el("span", {"class": "clipped"}, [" … " + p.c + " more characters (tracelab show --full)"]));
      else if (p.e) td.appendChild(el("span", {"class": "badge error"}, ["error"]));
    });
    return td;
  }

  function renderRun(id) {
    var run = RUNS.runs[id];
    var view = document.getElementById("run-view");
    view.textContent = "";
    if (!run) {
      view.appendChild(el("p", {"class": "leftout"}, ["Run " + id + " is not in this file (over --max-runs)."]));
      return;
    }
    var head = el("div", {"class": "runhead", "id": "run-head", "data-run": id}, [el("h3", {}, ["Run ", el("span", {"class": "id"}, [id])])]);
    run.head.forEach(function (kv) {
      head.appendChild(el("span", {}, [el("span", {"class": "muted"}, [kv[0] + " "]), kv[1] === null ? "-" : String(kv[1])]));
    });
    head.appendChild(el("a", {"href": "#cases"}, ["back to the cases"]));
    view.appendChild(head);
    run.whole.forEach(function (f) {
      view.appendChild(el("div", {"class": "runfail"}, ["✗ whole run: ", el("span", {"class": "id"}, [f[0]]), "  " + (f[1] || "")]));
    });
    var table = el("table", {"class": "timeline"});
    ["idx", "kind", "tool", "st", "eff", "content", "why"].forEach(function (c) { table.appendChild(el("col", {"class": c})); });
    table.appendChild(el("thead", {}, [el("tr", {}, ["idx", "kind", "tool", "status", "effect", "args / text", "failed assertions"].map(function (h) { return el("th", {}, [h]); }))]));
    var body = el("tbody");
    run.steps.forEach(function (s) {
      var failed = s[6] && s[6].length;
      var why = el("td", {"class": "why"});
      (s[6] || []).forEach(function (f) {
        why.appendChild(el("div", {}, ["✗ ", el("span", {"class": "id"}, [f[0]]), " " + (f[1] || "")]));
      });
      body.appendChild(el("tr", {"class": failed ? "failed" : "", "id": "step-" + s[0]},
        [el("td", {"class": "num"}, [String(s[0])]), el("td", {}, [s[1]]), el("td", {"class": "id"}, [s[2] || ""]),
         el("td", {}, [badge(s[3])]), el("td", {}, [badge(s[4])]), content(s[5]), why]));
    });
    table.appendChild(body);
    view.appendChild(table);
    run.tail.forEach(function (t) {
      var p = el("p", {"class": "tail"}, [el("b", {}, [t[0] + ": "])]);
      var c = content(t[1]);
      while (c.firstChild) p.appendChild(c.firstChild);
      view.appendChild(p);
    });
  }

  function openTarget() {
    var hash = decodeURIComponent(location.hash.slice(1));
    if (!hash) return;
    if (hash.indexOf("run-") === 0) {
      renderRun(hash.slice(4));
      document.body.classList.add("run-open");  // the run comes first (CSS order), no scrolling needed
      window.scrollTo(0, 0);
      return;
    }
    document.body.classList.remove("run-open");
    var target = document.getElementById(hash);
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    if (target) target.scrollIntoView();
  }

  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
