// What axe-core finds wrong in the admin's own scripts (tests/e2e/test_browser_axe.py), put right after they ran.
// SelectFilter2.js (the two-list widget of groups, tools…) labels its magnifier icon, a <span>, with aria-label,
// which a span without a role may not carry: as an image, its label is what the filter field is called.
window.addEventListener("load", () => {
  setTimeout(() => {
    for (const icon of document.querySelectorAll(".search-label-icon[aria-label]:not([role])")) {
      icon.setAttribute("role", "img");
    }
  }, 0);
});
