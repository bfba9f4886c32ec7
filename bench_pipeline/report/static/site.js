// Progressive enhancement only: every table reads fine without this file.
// Sortable tables: a header with data-sort="num" sorts on each cell's data-v (missing
// values last), data-sort="text" on the text. Tables with data-filter get a search box.
(function () {
  "use strict";

  function cellValue(row, index, kind) {
    var cell = row.cells[index];
    if (!cell) return null;
    if (kind === "num") {
      var raw = cell.getAttribute("data-v");
      if (raw === null || raw === "") return null;
      var n = parseFloat(raw);
      return isNaN(n) ? null : n;
    }
    return cell.textContent.trim().toLowerCase();
  }

  function sortTable(table, index, kind, header) {
    var body = table.tBodies[0];
    if (!body) return;
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (row, i) {
      return { row: row, i: i, v: cellValue(row, index, kind) };
    });
    keyed.sort(function (a, b) {
      if (a.v === null && b.v === null) return a.i - b.i;
      if (a.v === null) return 1;
      if (b.v === null) return -1;
      var c = kind === "num" ? a.v - b.v : a.v.localeCompare(b.v);
      if (c === 0) return a.i - b.i;
      return ascending ? c : -c;
    });
    keyed.forEach(function (k) { body.appendChild(k.row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.removeAttribute("aria-sort");
    });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    if (!table.tHead) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      var kind = th.getAttribute("data-sort");
      if (!kind) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener("click", function () { sortTable(table, index, kind, th); });
    });
  });

  Array.prototype.forEach.call(document.querySelectorAll("table[data-filter]"), function (table, n) {
    var body = table.tBodies[0];
    if (!body) return;
    var wrap = document.createElement("p");
    wrap.className = "filter";
    var id = "filter-" + (table.id || n);
    var label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = "Filter the rows of this page: ";
    var input = document.createElement("input");
    input.type = "search";
    input.id = id;
    input.setAttribute("aria-controls", table.id || "");
    wrap.appendChild(label);
    wrap.appendChild(input);
    var region = table.parentNode;
    region.parentNode.insertBefore(wrap, region);
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      Array.prototype.forEach.call(body.rows, function (row) {
        row.hidden = q !== "" && row.textContent.toLowerCase().indexOf(q) === -1;
      });
    });
  });
})();
