// tracelab view: opens a run's timeline from the embedded data (no network, no external file).
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("tl-runs").textContent);
  var S = DATA.s;  // the string table: every text of a run is a position in it
  var RUNS = DATA.runs;
  var SECTIONS = ["summary", "cases", "matrix", "run"];
  var PREVIEW = 400;  // characters of a text shown before "show all": the rest opens in place
  function str(i) { return i === null || i === undefined ? "" : S[i]; }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  // a name that may wrap after each "_", ".", "/" or "-" (a long tool name never runs under the next column)
  function name(value) {
    var node = el("span");
    value.split(/(?<=[_./-])/).forEach(function (part, i) {
      if (i) node.appendChild(el("wbr"));
      node.appendChild(document.createTextNode(part));
    });
    return node;
  }

  function badge(value) {
    return value ? el("span", {"class": "badge " + value}, [value]) : document.createTextNode("");
  }

  // a text whole: a long one shows its first PREVIEW characters, the rest opens in place
  function text(value) {
    if (value.length <= PREVIEW) return document.createTextNode(value);
    var rest = value.length - PREVIEW;
    var more = el("details", {"class": "more"}, [el("summary", {}, ["… show all (" + rest.toLocaleString() + " more characters)"]),
                                                 value.slice(PREVIEW)]);
    return el("span", {}, [value.slice(0, PREVIEW), more]);
  }

  // content parts: a number is a text; {w: text} a withheld notice; {c: n}: n more characters
  // were left out (the file's text cap was reached); {e: 1}: the step's error follows
  function fill(node, parts) {
    (parts || []).forEach(function (p, i) {
      if (i > 0 && p.c === undefined) node.appendChild(document.createTextNode("  "));
      if (typeof p === "number") node.appendChild(text(S[p]));
      else if (p.w !== undefined) node.appendChild(el("span", {"class": "withheld"}, [S[p.w]]));
      else if (p.c !== undefined) node.appendChild(el("span", {"class": "clipped"}, [" … " + p.c.toLocaleString() +
        " more characters left out: this file's text cap was reached (see the summary; tracelab show --full)"]));
      else if (p.e) node.appendChild(el("span", {"class": "badge error"}, ["error"]));
    });
    return node;
  }

  function ms(value, plus) {
    if (value === null || value === undefined) return "";
    var sign = plus ? "+" : "";
    return Math.abs(value) >= 1000 ? sign + (value / 1000).toFixed(2) + " s" : sign + Math.round(value) + " ms";
  }

  // a step's time: [offset ms, duration ms, tokens] or 0 (the source recorded none)
  function timing(t) {
    if (!t) return "";
    var out = [];
    if (t[0] !== null) out.push(ms(t[0], true));
    if (t[1] !== null) out.push(ms(t[1]));
    if (t[2] !== null) out.push(t[2].toLocaleString() + " tok");
    return out.join(" · ");
  }

  function effect(value, source) {
    if (!value) return document.createTextNode("");
    var node = el("span", {}, [badge(value)]);
    if (source) node.appendChild(el("span", {"class": "muted src"}, [" · " + source]));
    return node;
  }

  function renderRun(id) {
    var run = RUNS[id];
    var view = document.getElementById("run-view");
    view.textContent = "";
    if (!run) {
      view.appendChild(el("p", {"class": "leftout"}, ["Run " + id + " is not in this file (over --max-runs)."]));
      return;
    }
    var head = el("div", {"class": "runhead", "id": "run-head", "data-run": id}, [el("h3", {}, ["Run ", el("span", {"class": "id"}, [id])])]);
    run.head.forEach(function (kv) {
      head.appendChild(el("span", {}, [el("span", {"class": "muted"}, [str(kv[0]) + " "]), kv[1] === null ? "-" : str(kv[1])]));
    });
    head.appendChild(el("a", {"href": "#cases"}, ["back to the cases"]));
    view.appendChild(head);
    var failing = run.steps.filter(function (s) { return s[6] && s[6].length; });
    if (failing.length) {
      var jump = el("div", {"class": "runfail"}, ["✗ failing steps: "]);
      failing.forEach(function (s, i) {
        if (i) jump.appendChild(document.createTextNode(", "));
        jump.appendChild(el("a", {"href": "#step-" + s[0]}, [String(s[0])]));
      });
      view.appendChild(jump);
    }
    run.whole.forEach(function (f) {
      view.appendChild(el("div", {"class": "runfail"}, ["✗ whole run: ", el("span", {"class": "id"}, [str(f[0])]), "  " + str(f[1])]));
    });
    var table = el("table", {"class": "timeline"});
    var timed = run.steps.some(function (s) { return s[8]; });  // a time column only where the source recorded one
    var cols = ["idx", "kind", "tool", "st", "eff"].concat(timed ? ["time"] : [], ["content", "why"]);
    var heads = ["idx", "kind", "tool", "status", "effect"].concat(timed ? ["time"] : [], ["args / text", "failed assertions"]);
    cols.forEach(function (c) { table.appendChild(el("col", {"class": c})); });
    table.appendChild(el("thead", {}, [el("tr", {}, heads.map(function (h) { return el("th", {}, [h]); }))]));
    var body = el("tbody");
    // a step: [idx, kind, tool, status, effect, content parts, [[assertion, reason], ...] or 0,
    // effect source, [offset ms, duration ms, tokens] or 0]
    run.steps.forEach(function (s) {
      var failures = s[6] || [];
      var why = el("td", {"class": "why"});
      failures.forEach(function (f) {
        why.appendChild(el("div", {}, ["✗ ", el("span", {"class": "id"}, [str(f[0])]), " " + str(f[1])]));
      });
      body.appendChild(el("tr", {"class": failures.length ? "failed" : "", "id": "step-" + s[0]},
        [el("td", {"class": "num"}, [String(s[0])]), el("td", {}, [name(str(s[1]))]), el("td", {"class": "id"}, [name(str(s[2]))]),
         el("td", {}, [badge(str(s[3]))]), el("td", {"class": "eff"}, [effect(str(s[4]), str(s[7]))])]
        .concat(timed ? [el("td", {"class": "time"}, [timing(s[8])])] : [], [fill(el("td", {"class": "content"}), s[5]), why])));
    });
    table.appendChild(body);
    view.appendChild(table);
    run.tail.forEach(function (t) {
      view.appendChild(fill(el("p", {"class": "tail"}, [el("b", {}, [str(t[0]) + ": "])]), t[1]));
    });
  }

  function openTarget() {
    var hash;
    try { hash = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    if (!hash) return;
    if (hash.indexOf("step-") === 0) {  // a step of the open run
      var step = document.getElementById(hash);
      if (step) step.scrollIntoView({block: "center"});
      return;
    }
    var section = hash.indexOf("run-") === 0 ? "run" : hash;
    if (SECTIONS.indexOf(section) >= 0) {
      if (section === "run" && hash !== "run") renderRun(hash.slice(4));
      document.body.className = "open-" + section;  // that section comes first (CSS order): no scrolling
      window.scrollTo(0, 0);
      return;
    }
    document.body.className = "";
    var target = document.getElementById(hash);
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    if (target) target.scrollIntoView();
  }

  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
