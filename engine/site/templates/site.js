/* GENEB static site: every page reads window.GENEB_SITE (assets/data.js). Every text from the
   store is set with textContent or as an attribute value, never parsed as HTML. */
(function () {
  "use strict";
  var D = window.GENEB_SITE;
  var body = document.body;
  var ROOT = body.getAttribute("data-root") || "";
  var REGIME_NAMES = { "full": "Full", "10shot": "10-shot", "1shot": "1-shot" };
  var METRIC_NAMES = { "mcc": "MCC", "acc": "Accuracy", "f1_macro": "F1 (macro)" };
  var SIZES = ["<100M", "100M-1B", ">1B", "n/a"];

  /* The document keeps rows as lists (a small file); here they become objects. */
  function named(columns, row) {
    var out = {};
    columns.forEach(function (c, i) { out[c] = row[i]; });
    return out;
  }
  D.metrics.forEach(function (metric) {
    D.regimes.forEach(function (regime) {
      D.boards[metric][regime].rows.forEach(function (row) {
        row.scores = named(D.scopes, row.scores);
        row.ranks = named(D.scopes, row.ranks);
      });
    });
    Object.keys(D.rank_shift[metric]).forEach(function (regime) {
      D.rank_shift[metric][regime] = D.rank_shift[metric][regime].map(function (row) {
        return named(["entry"].concat(D.shift_columns), row);
      });
    });
    D.degradation[metric] = D.degradation[metric].map(function (row) {
      return named(["entry"].concat(D.degradation_columns), row);
    });
  });

  function $(id) { return document.getElementById(id); }

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    if (cls) { node.className = cls; }
    return node;
  }

  function fmt(value, digits) {
    return value === null || value === undefined ? "\u2014" : value.toFixed(digits === undefined ? 3 : digits);
  }

  function paramsText(n) {
    if (!n) { return "n/a"; }
    var units = [["B", 1e9], ["M", 1e6], ["K", 1e3]];
    for (var i = 0; i < units.length; i++) {
      if (n >= units[i][1]) { return Number((n / units[i][1]).toPrecision(3)) + units[i][0]; }
    }
    return String(n);
  }

  function fill(select, values, names) {
    select.textContent = "";
    values.forEach(function (v) {
      var opt = el("option", names ? (names[v] || v) : v);
      opt.value = v;
      select.appendChild(opt);
    });
  }

  function modelOf(entry) { return D.models[D.entries[entry].model]; }

  function badge(entry) {
    var text = D.entries[entry].badge;
    return el("span", text, "badge badge-" + text.toLowerCase().replace(/[^a-z-]/g, "-"));
  }

  function modelLink(entry) {
    var m = modelOf(entry);
    var a = el("a", m.display);
    a.href = ROOT + m.page;
    a.title = m.id;
    return a;
  }

  function footer() {
    var f = $("footer");
    f.textContent = "Built by geneb " + D.version + " (" + D.generator + ") from results table version " +
      (D.table_version === null ? "none" : D.table_version) + "; suite " + D.suite + ", protocol " +
      D.protocol + (D.resamples ? "; intervals: " + D.resamples + " task-bootstrap resamples at level " +
      D.level + " (seed " + D.bootstrap_seed + ")" : "; no intervals (0 resamples)") + ".";
  }

  function header(cells, sortable) {
    var tr = el("tr");
    cells.forEach(function (c) {
      var th = el("th", c.href ? null : c.label);
      if (c.href) {
        var a = el("a", c.label);
        a.href = c.href;
        th.appendChild(a);
      }
      if (c.title) { th.title = c.title; }
      if (sortable && c.key) {
        th.className = "sortable";
        th.setAttribute("data-col", c.key);
      }
      tr.appendChild(th);
    });
    return tr;
  }

  function numCell(value, digits) { return el("td", fmt(value, digits), "num"); }

  /* ---- the leaderboard ---- */
  var state = { regime: "full", metric: D.metrics[0], size: "", architecture: "", tokenization: "",
                pretraining: "", search: "", tab: "categories", taskCategory: D.categories[0],
                sort: "macro", descending: true, contextScope: "macro" };
  var FILTERS = { size: "size", architecture: "architecture_family",
                  tokenization: "tokenization_family", pretraining: "pretraining_data" };

  function distinct(field) {
    var seen = {};
    D.models.forEach(function (m) { seen[m[field]] = true; });
    var values = Object.keys(seen);
    return field === "size" ? SIZES.filter(function (s) { return seen[s]; }) : values.sort();
  }

  function columns() {
    var board = D.boards[state.metric][state.regime];
    var cols = [{ label: "Rank", key: "rank" }, { label: "Model", key: "model" },
                { label: "Provenance" }, { label: "Params", key: "params" },
                { label: "Macro", key: "macro" }];
    if (D.resamples) {
      cols.push({ label: "Macro interval", title: "percentile interval of the task bootstrap" });
      cols.push({ label: "Rank interval" });
    }
    cols.push({ label: "Micro", key: "micro" });
    if (state.tab === "categories") {
      D.categories.forEach(function (c) { cols.push({ label: c, key: "cat:" + c }); });
    } else {
      D.tasks.forEach(function (t, i) {
        if (t.category === state.taskCategory) {
          cols.push({ label: t.label, key: "task:" + i, title: t.id, href: ROOT + t.page });
        }
      });
    }
    return { cols: cols, board: board };
  }

  function value(row, key) {
    if (key === "rank") { return row.ranks.macro === null ? null : -row.ranks.macro; }
    if (key === "model") { return modelOf(row.entry).display.toLowerCase(); }
    if (key === "params") { return modelOf(row.entry).params || 0; }
    if (key === "macro" || key === "micro") { return row.scores[key]; }
    if (key.indexOf("cat:") === 0) { return row.scores[key.slice(4)]; }
    var t = D.tasks[Number(key.slice(5))];
    var s = t.scores[state.metric] && t.scores[state.metric][state.regime];
    return s ? s[row.entry] : null;
  }

  function kept(row) {
    var m = modelOf(row.entry);
    for (var f in FILTERS) {
      if (state[f] && m[FILTERS[f]] !== state[f]) { return false; }
    }
    var q = state.search.trim().toLowerCase();
    return !q || m.display.toLowerCase().indexOf(q) >= 0 || m.id.toLowerCase().indexOf(q) >= 0;
  }

  function sorted(rows) {
    var key = state.sort, sign = state.descending ? -1 : 1;
    return rows.slice().sort(function (a, b) {
      var x = value(a, key), y = value(b, key);
      if (x === y) { return a.entry - b.entry; }
      if (x === null || x === undefined) { return 1; }
      if (y === null || y === undefined) { return -1; }
      return (x < y ? -1 : 1) * sign;
    });
  }

  function renderLeader(board) {
    var p = $("leader");
    p.textContent = "";
    if (board.leader === null) {
      p.removeAttribute("data-model");
      p.appendChild(el("span", D.resamples ? "No entry has every task of this regime." :
                       "No leader: the site was built without resamples."));
      return;
    }
    var m = modelOf(board.leader);
    p.setAttribute("data-model", m.id);
    p.setAttribute("data-source", D.entries[board.leader].source);
    p.appendChild(el("strong", "Leader (" + REGIME_NAMES[state.regime] + ", " +
                     METRIC_NAMES[state.metric] + ", macro): "));
    p.appendChild(modelLink(board.leader));
    var others = board.tie_group.filter(function (e) { return e !== board.leader; });
    var rule = board.rule;
    var how = " (the sign-flip test of the " + rule.n_tasks + " tasks' differences against the leader, " +
      "p \u2264 " + rule.threshold_text + ", with the bootstrap interval of the difference excluding 0)";
    var text;
    if (!rule.compared) {   // the leader alone has every task: no rule to state
      text = "; the only entry with every task of this regime: none to compare it with";
    } else if (rule.too_few) {
      text = "; nothing is separable from it here: " + rule.too_few;
    } else if (others.length) {
      text = "; not separable from it: " + others.length + " other entr" +
        (others.length === 1 ? "y" : "ies") + " (highlighted)" + how;
    } else {
      text = "; every other entry is separably behind it" + how;
    }
    p.appendChild(el("span", text));
  }

  function renderBoard() {
    var spec = columns(), board = spec.board;
    var thead = $("board").tHead, tbody = $("board").tBodies[0];
    thead.textContent = "";
    tbody.textContent = "";
    thead.appendChild(header(spec.cols, true));
    Array.prototype.forEach.call(thead.querySelectorAll("th[data-col]"), function (th) {
      if (th.getAttribute("data-col") === state.sort) {
        th.setAttribute("aria-sort", state.descending ? "descending" : "ascending");
      }
    });
    sorted(board.rows.filter(kept)).forEach(function (row) {
      var m = modelOf(row.entry);
      var tr = el("tr");
      tr.setAttribute("data-model", m.id);
      tr.setAttribute("data-source", D.entries[row.entry].source);
      if (row.tied) { tr.className = "tied"; }
      tr.appendChild(numCell(row.ranks.macro, 0));
      var name = el("td");
      name.appendChild(modelLink(row.entry));
      tr.appendChild(name);
      var prov = el("td");
      prov.appendChild(badge(row.entry));
      tr.appendChild(prov);
      tr.appendChild(el("td", paramsText(m.params), "num"));
      tr.appendChild(numCell(row.scores.macro));
      if (D.resamples) {
        tr.appendChild(el("td", row.low === undefined || row.low === null ? "\u2014" :
                          "[" + fmt(row.low) + ", " + fmt(row.high) + "]", "num"));
        tr.appendChild(el("td", row.rank_low === undefined || row.rank_low === null ? "\u2014" :
                          row.rank_low + "\u2013" + row.rank_high, "num"));
      }
      tr.appendChild(numCell(row.scores.micro));
      spec.cols.slice(D.resamples ? 8 : 6).forEach(function (c) { tr.appendChild(numCell(value(row, c.key))); });
      tbody.appendChild(tr);
    });
    $("board-note").textContent = tbody.rows.length + " of " + board.rows.length + " entries shown.";
    renderLeader(board);
  }

  function renderCD() {
    var box = $("cd"), cd = D.cd[state.metric][state.regime];
    box.textContent = "";
    if (!cd) {
      $("cd-note").textContent = "No rank test for this regime.";
      return;
    }
    $("cd-note").textContent = "Average rank over " + cd.n_tasks + " tasks (1 is best). " +
      cd.p_is + "; Nemenyi critical difference at alpha " + cd.alpha + ": " +
      fmt(cd.critical_difference, 2) + ". Entries inside the shaded band are within that " +
      "critical difference of the best one (the Nemenyi test does not separate them).";
    var NS = "http://www.w3.org/2000/svg", rowH = 16, left = 260, width = 560, top = 24;
    var n = cd.n_models, height = top + cd.ranks.length * rowH + 8;
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("width", left + width + 20);
    svg.setAttribute("height", height);
    svg.setAttribute("role", "img");
    function x(rank) { return left + (rank - 1) / Math.max(n - 1, 1) * width; }
    function add(tag, attrs, text) {
      var node = document.createElementNS(NS, tag);
      for (var k in attrs) { node.setAttribute(k, attrs[k]); }
      if (text !== undefined) { node.textContent = text; }
      svg.appendChild(node);
      return node;
    }
    var best = cd.ranks[0][1];
    if (cd.critical_difference !== null) {
      add("rect", { x: x(best), y: top - 4, width: Math.min(x(best + cd.critical_difference), left + width) - x(best),
                    height: height - top, fill: "#fff8c5" });
    }
    add("line", { x1: left, y1: top - 6, x2: left + width, y2: top - 6, stroke: "#57606a" });
    for (var r = 1; r <= n; r += Math.max(1, Math.round(n / 10))) {
      add("text", { x: x(r), y: top - 10, "text-anchor": "middle" }, String(r));
    }
    cd.ranks.forEach(function (pair, i) {
      var y = top + i * rowH + rowH / 2;
      add("text", { x: left - 8, y: y + 4, "text-anchor": "end" }, modelOf(pair[0]).display);
      add("line", { x1: left, y1: y, x2: x(pair[1]), y2: y, stroke: "#d0d7de" });
      add("circle", { cx: x(pair[1]), cy: y, r: 4, fill: "#0b5cad" });
    });
    box.appendChild(svg);
  }

  function renderShift() {
    var table = $("shift");
    table.tHead.textContent = "";
    table.tBodies[0].textContent = "";
    var regimes = Object.keys(D.rank_shift[state.metric]);
    var cols = [{ label: "Model" }, { label: "Full rank" }];
    regimes.forEach(function (r) {
      cols.push({ label: REGIME_NAMES[r] + " rank" });
      cols.push({ label: "Shift" });
    });
    table.tHead.appendChild(header(cols, false));
    var byEntry = {};
    regimes.forEach(function (r) {
      D.rank_shift[state.metric][r].forEach(function (s) {
        (byEntry[s.entry] = byEntry[s.entry] || { rank_a: s.rank_a })[r] = s;
      });
    });
    Object.keys(byEntry).map(Number).sort(function (a, b) {
      return (byEntry[a].rank_a || 1e9) - (byEntry[b].rank_a || 1e9) || a - b;
    }).forEach(function (entry) {
      var tr = el("tr"), td = el("td");
      td.appendChild(modelLink(entry));
      tr.appendChild(td);
      tr.appendChild(numCell(byEntry[entry].rank_a, 0));
      regimes.forEach(function (r) {
        var s = byEntry[entry][r] || {};
        tr.appendChild(numCell(s.rank_b, 0));
        tr.appendChild(el("td", s.shift === null || s.shift === undefined ? "\u2014" :
                          (s.shift > 0 ? "+" : "") + s.shift, "num"));
      });
      table.tBodies[0].appendChild(tr);
    });
  }

  /* Score against context: only in a site whose data has the curves (a model at two context
     policies or more); the section is made here, so every other site's index is as before.
     Its scopes: macro, and each category where the suite has more than one (a select). */
  function contextScopes() {
    var found = {};
    Object.keys(D.context_curve).forEach(function (metric) {
      Object.keys(D.context_curve[metric]).forEach(function (regime) {
        D.context_curve[metric][regime].forEach(function (row) {
          found[named(["model", "entry"].concat(D.context_columns), row).scope] = true;
        });
      });
    });
    return D.scopes.filter(function (s) { return found[s]; });
  }

  function contextSection() {
    var section = el("section");
    section.id = "context";
    section.appendChild(el("h2", "Score against context"));
    section.appendChild(el("p", "Each model's entries at several context policies, in order of " +
      "length: the nucleotides each sequence was cut to (windows: each window's), own limit: " +
      "the model's own. The score of the scope (macro, or a category: the mean of its tasks) " +
      "with its task-bootstrap interval at level " + D.level + "; each point is its own " +
      "entry, never pooled.", "note"));
    var scopes = contextScopes();
    if (scopes.length > 1) {
      var label = el("label", "Scope ");
      var select = el("select");
      select.id = "context-scope";
      fill(select, scopes, { macro: "Macro" });
      label.appendChild(select);
      section.appendChild(label);
    }
    var scroll = el("div", null, "scroll");
    var table = el("table");
    table.id = "context-table";
    table.appendChild(el("thead"));
    table.appendChild(el("tbody"));
    scroll.appendChild(table);
    section.appendChild(scroll);
    document.querySelector("main").appendChild(section);
    if (scopes.length > 1) { bind("context-scope", "contextScope", renderContext); }
  }

  function renderContext() {
    if (!D.context_curve) { return; }
    var columns = ["model", "entry"].concat(D.context_columns);
    var rows = ((D.context_curve[state.metric] || {})[state.regime] || []).filter(function (row) {
      return named(columns, row).scope === state.contextScope;
    });
    var table = $("context-table");
    $("context").hidden = !rows.length;
    table.tHead.textContent = "";
    table.tBodies[0].textContent = "";
    table.tHead.appendChild(header([{ label: "Model" }, { label: "Context" }, { label: "Length" },
      { label: "Entry" }, { label: state.contextScope === "macro" ? "Macro" : state.contextScope },
      { label: "Low" }, { label: "High" }], false));
    rows.forEach(function (row) {
      var r = named(columns, row);
      var tr = el("tr"), td = el("td");
      var m = D.models.find(function (x) { return x.id === r.model; });
      tr.appendChild(el("td", m ? m.display : r.model));
      tr.appendChild(el("td", r.context));
      tr.appendChild(el("td", r.context_length === null ? "own limit" : String(r.context_length), "num"));
      td.appendChild(modelLink(r.entry));
      tr.appendChild(td);
      tr.appendChild(numCell(r.value));
      tr.appendChild(numCell(r.low));
      tr.appendChild(numCell(r.high));
      table.tBodies[0].appendChild(tr);
    });
  }

  function renderIndex() {
    renderBoard();
    renderCD();
    renderShift();
    renderContext();
  }

  function bind(id, key, render) {
    var node = $(id);
    node.value = state[key];
    node.addEventListener(node.tagName === "INPUT" ? "input" : "change", function () {
      state[key] = node.value;
      render();
    });
  }

  function initIndex() {
    if (D.title) { $("title").textContent = D.title; document.title = D.title; }
    $("subtitle").textContent = D.models.length + " models, " + D.tasks.length + " tasks of " + D.suite + ".";
    fill($("regime"), D.regimes, REGIME_NAMES);
    fill($("metric"), D.metrics, METRIC_NAMES);
    Object.keys(FILTERS).forEach(function (f) {
      fill($(f), [""].concat(distinct(FILTERS[f])), { "": "All" });
    });
    fill($("task-category"), D.categories);
    ["regime", "metric", "size", "architecture", "tokenization", "pretraining", "search"].forEach(function (k) {
      bind(k, k, renderIndex);
    });
    bind("task-category", "taskCategory", renderBoard);
    ["categories", "tasks"].forEach(function (tab) {
      $("tab-" + tab).addEventListener("click", function () {
        state.tab = tab;
        $("tab-categories").classList.toggle("active", tab === "categories");
        $("tab-tasks").classList.toggle("active", tab === "tasks");
        $("task-category-label").hidden = tab !== "tasks";
        renderBoard();
      });
    });
    $("board").tHead.addEventListener("click", function (event) {
      var th = event.target.closest("th[data-col]");
      if (!th || event.target.closest("a")) { return; }
      var key = th.getAttribute("data-col");
      state.descending = key === state.sort ? !state.descending : key !== "model";
      state.sort = key;
      renderBoard();
    });
    if (D.context_curve) { contextSection(); }
    renderIndex();
  }

  /* ---- a model's page ---- */
  function facts(pairs) {
    var dl = $("facts");
    pairs.forEach(function (p) {
      dl.appendChild(el("dt", p[0]));
      var dd = el("dd");
      if (p[1] instanceof Node) { dd.appendChild(p[1]); } else { dd.textContent = p[1]; }
      dl.appendChild(dd);
    });
  }

  function initModel() {
    var key = body.getAttribute("data-key");
    var mi = D.models.findIndex(function (m) { return m.page === "models/" + key + ".html"; });
    var m = D.models[mi];
    var entries = D.entries.map(function (e, i) { return i; }).filter(function (i) { return D.entries[i].model === mi; });
    document.title = m.display + " \u2014 GENEB";
    $("title").textContent = m.display;
    $("subtitle").textContent = m.id;
    var badges = el("span");
    entries.forEach(function (e) { badges.appendChild(badge(e)); badges.appendChild(document.createTextNode(" ")); });
    facts([["Model id", m.id], ["Provenance", badges], ["Parameters", paramsText(m.params)],
           ["Size", m.size], ["Architecture", m.architecture + " (" + m.architecture_family + ")"],
           ["Tokenization", m.tokenization + " (" + m.tokenization_family + ")"],
           ["Pretraining data", m.pretraining_data],
           ["Licence of the weights", m.weights_licence || "unknown"],
           ["Licence of the code", m.code_licence || "unknown"],
           ["Licences read from", m.licence_source || "not recorded"],
           ["Hub commit", m.hub_id ? (m.commit ? m.commit + " (read from " + (m.commit_source || "?") + ")"
                                       : "not recorded: " + (m.commit_reason || "no reason given"))
                                   : "not a hub model"]]);
    var mstate = { regime: "full", metric: D.metrics[0] };
    fill($("regime"), D.regimes, REGIME_NAMES);
    fill($("metric"), D.metrics, METRIC_NAMES);
    function render() {
      var prof = $("profile"), deg = $("degradation");
      [prof, deg].forEach(function (t) { t.tHead.textContent = ""; t.tBodies[0].textContent = ""; });
      prof.tHead.appendChild(header([{ label: "Scope" }, { label: "Source" }, { label: "Score" },
                                     { label: "Rank" }, { label: "" }], false));
      var board = D.boards[mstate.metric][mstate.regime];
      board.rows.filter(function (r) { return entries.indexOf(r.entry) >= 0; }).forEach(function (row) {
        ["macro", "micro"].concat(D.categories).forEach(function (scope) {
          var tr = el("tr"), v = row.scores[scope];
          tr.appendChild(el("td", scope));
          tr.appendChild(el("td", D.entries[row.entry].badge));
          tr.appendChild(numCell(v));
          tr.appendChild(el("td", row.ranks[scope] === null ? "\u2014" : row.ranks[scope] + " of " + board.rows.length, "num"));
          var bar = el("span", null, "bar"), td = el("td");
          bar.style.width = Math.round(Math.max(0, Math.min(1, v || 0)) * 200) + "px";
          td.appendChild(bar);
          tr.appendChild(td);
          prof.tBodies[0].appendChild(tr);
        });
      });
      var few = D.regimes.filter(function (r) { return r !== "full"; });
      var cols = [{ label: "Scope" }, { label: "Source" }].concat(D.regimes.map(function (r) { return { label: REGIME_NAMES[r] }; }),
        few.map(function (r) { return { label: "Retention " + REGIME_NAMES[r] }; }));
      deg.tHead.appendChild(header(cols, false));
      D.degradation[mstate.metric].filter(function (r) { return entries.indexOf(r.entry) >= 0; }).forEach(function (r) {
        var tr = el("tr");
        tr.appendChild(el("td", r.scope));
        tr.appendChild(el("td", D.entries[r.entry].badge));
        D.regimes.forEach(function (g) { tr.appendChild(numCell(r[g])); });
        few.forEach(function (g) { tr.appendChild(numCell(r["retention_" + g], 2)); });
        deg.tBodies[0].appendChild(tr);
      });
    }
    ["regime", "metric"].forEach(function (k) {
      $(k).value = mstate[k];
      $(k).addEventListener("change", function () { mstate[k] = $(k).value; render(); });
    });
    render();
  }

  /* ---- a task's page ---- */
  function initTask() {
    var key = body.getAttribute("data-key");
    var t = D.tasks.find(function (x) { return x.page === "tasks/" + key + ".html"; });
    document.title = t.label + " \u2014 GENEB";
    $("title").textContent = t.label;
    $("subtitle").textContent = t.id;
    facts([["Task id", t.id], ["Category", t.category],
           ["Health", t.health === null || t.health === undefined ? "no audit" : t.health]]);
    var metric = D.metrics[0];
    fill($("metric"), D.metrics, METRIC_NAMES);
    function render() {
      var table = $("scores");
      table.tHead.textContent = "";
      table.tBodies[0].textContent = "";
      table.tHead.appendChild(header([{ label: "Model" }, { label: "Provenance" }].concat(
        D.regimes.map(function (r) { return { label: REGIME_NAMES[r] }; })), false));
      var s = t.scores[metric] || {};
      D.entries.map(function (e, i) { return i; }).filter(function (i) {
        return D.regimes.some(function (r) { return s[r] && s[r][i] !== null; });
      }).sort(function (a, b) {
        var x = s.full ? s.full[a] : null, y = s.full ? s.full[b] : null;
        return (y === null ? -Infinity : y) - (x === null ? -Infinity : x) || a - b;
      }).forEach(function (i) {
        var tr = el("tr"), td = el("td"), prov = el("td");
        tr.setAttribute("data-model", modelOf(i).id);
        td.appendChild(modelLink(i));
        tr.appendChild(td);
        prov.appendChild(badge(i));
        tr.appendChild(prov);
        D.regimes.forEach(function (r) { tr.appendChild(numCell(s[r] ? s[r][i] : null)); });
        table.tBodies[0].appendChild(tr);
      });
    }
    $("metric").addEventListener("change", function () { metric = $("metric").value; render(); });
    render();
  }

  footer();
  var page = body.getAttribute("data-page");
  if (page === "index") { initIndex(); } else if (page === "model") { initModel(); } else { initTask(); }
}());
