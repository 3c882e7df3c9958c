// The account menu in every page's header (templates/base.html): a <details>, so it opens without this script;
// this closes it on a click elsewhere and on Escape, as the chat's other menus do (share.js, tools.js).

const menu = document.getElementById("account-menu");

if (menu) {
  document.addEventListener("click", (event) => {
    if (menu.open && !menu.contains(event.target)) menu.open = false;
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !menu.open) return;
    menu.open = false;
    menu.querySelector("summary").focus();
  });
}
