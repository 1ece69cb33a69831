(function () {
  "use strict";
  var table = document.getElementById("top");
  var form = document.getElementById("filters");
  if (!table || !form || !table.tBodies.length) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var product = document.getElementById("f-product");
  var path = document.getElementById("f-path");
  var status = document.getElementById("f-status");
  var query = document.getElementById("f-q");
  var count = document.getElementById("f-count");
  form.hidden = false;
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  function apply() {
    var q = query.value.trim().toLowerCase(), shown = 0;
    rows.forEach(function (r) {
      var ok = (!product.value || (" " + r.getAttribute("data-product") + " ").indexOf(" " + product.value + " ") >= 0) &&
        (!path.value || r.getAttribute("data-path") === path.value) &&
        (!status.value || r.getAttribute("data-status") === status.value) &&
        (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
      r.hidden = !ok;
      if (ok) { shown++; }
    });
    count.textContent = shown + " of " + rows.length + " buckets";
  }
  [product, path, status].forEach(function (el) { el.addEventListener("change", apply); });
  query.addEventListener("input", apply);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  heads.forEach(function (th, col) {
    if (!th.hasAttribute("data-sort")) { return; }
    th.tabIndex = 0;
    function sort() {
      var numeric = th.getAttribute("data-sort") === "num";
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      if (!th.hasAttribute("aria-sort") && numeric && col > 0) { dir = -1; }
      heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
      function val(r) {
        var c = r.cells[col];
        var v = c.hasAttribute("data-v") ? c.getAttribute("data-v") : c.textContent.trim();
        return numeric ? parseFloat(v) || 0 : v.toLowerCase();
      }
      rows.sort(function (a, b) {
        var x = val(a), y = val(b);
        if (x < y) { return -dir; }
        if (x > y) { return dir; }
        return parseInt(a.cells[0].getAttribute("data-v"), 10) - parseInt(b.cells[0].getAttribute("data-v"), 10);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
  });
  apply();
})();
