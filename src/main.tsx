/**
 * The app's entry. Inside a frame (only `embed.html` may be framed) Kiln shows a notice and starts
 * nothing: no storage, no Python, no service worker, no channel to other tabs. A page that frames it
 * could otherwise lead a click onto its controls, with the person's own storage behind them. The
 * `frame-ancestors 'none'` header already refuses this; the check holds where a host drops the header.
 */
if (window.self === window.top) {
  void import("./start");
} else {
  const notice = document.createElement("p");
  notice.setAttribute("role", "alert");
  notice.textContent = "Kiln does not run inside another page. Open it in a tab of its own.";
  document.getElementById("root")?.replaceChildren(notice);
}
