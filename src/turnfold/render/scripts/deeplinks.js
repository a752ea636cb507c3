// @ts-check
// A static page's deep links (spec B-2): the element an address names (#turn-3, #call-<key>)
// is shown with exactly the <details> around it opened. Browsers that open those themselves
// on a link (Chromium) lose nothing; without script the link still lands where it can.
(() => {
  const reveal = () => {
    const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (!target) return;
    for (let node = target.parentElement; node; node = node.parentElement) {
      if (node instanceof HTMLDetailsElement) node.open = true;
    }
    target.scrollIntoView();
  };
  addEventListener("hashchange", reveal);
  reveal();
})();
