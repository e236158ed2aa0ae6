// Returns every visible text node whose contrast against its effective
// background is below the minimum, as {text, fg, bg, ratio, where}.
// Backgrounds are composed from the element up through its ancestors
// (alpha included) over the canvas; inside SVG a rect drawn under the text
// (a sibling or an ancestor's child covering it) is its background.
(minimum) => {
  const parse = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c || '');
    if (!m) return null;
    const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const over = (top, under) => {
    const a = top.a + under.a * (1 - top.a);
    const mix = (x, y) => (x * top.a + y * under.a * (1 - top.a)) / a;
    return {r: mix(top.r, under.r), g: mix(top.g, under.g), b: mix(top.b, under.b), a};
  };
  const lum = ({r, g, b}) => {
    const ch = (v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b);
  };
  const ratio = (a, b) => {
    const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const hex = ({r, g, b}) => '#' + [r, g, b].map((v) => Math.round(v).toString(16).padStart(2, '0')).join('');
  const white = {r: 255, g: 255, b: 255, a: 1};
  const svgUnder = (el, box) => {
    for (let e = el.parentElement; e && e instanceof SVGElement; e = e.parentElement) {
      for (const rect of e.querySelectorAll(':scope > rect')) {
        const r = rect.getBoundingClientRect();
        if (r.left <= box.left && r.right >= box.right && r.top <= box.top && r.bottom >= box.bottom) {
          const fill = parse(getComputedStyle(rect).fill);
          if (fill && fill.a > 0) return {fill, stop: e};
        }
      }
    }
    return null;
  };
  const background = (el, box) => {
    const layers = [];
    let e = el;
    if (el instanceof SVGElement) {
      const under = svgUnder(el, box);
      if (under) {
        layers.push(under.fill);
        e = under.stop;
      }
      while (e && e instanceof SVGElement) e = e.parentElement;
    }
    for (; e; e = e.parentElement) {
      const bg = parse(getComputedStyle(e).backgroundColor);
      if (bg && bg.a > 0) layers.push(bg);
      if (bg && bg.a >= 1) break;
    }
    let color = white;
    for (const layer of layers.reverse()) color = over(layer, color);
    return color;
  };
  const hidden = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.visibility === 'hidden' || cs.display === 'none' || Number(cs.opacity) === 0) return true;
    }
    return false;
  };
  const failures = [];
  let checked = 0;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.data.trim()) continue;
    const el = n.parentElement;
    if (!el || ['SCRIPT', 'STYLE', 'TITLE', 'OPTION'].includes(el.tagName) || el.closest('title')) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const box = range.getBoundingClientRect();
    if (box.width < 2 || box.height < 2 || box.bottom <= 0 || box.right <= 0 || hidden(el)) continue;
    const cs = getComputedStyle(el);
    const bg = background(el, box);
    let fg = parse(el instanceof SVGElement ? cs.fill : cs.color);
    if (!fg) continue;
    fg = over(fg, bg);
    checked++;
    const r = ratio(fg, bg);
    if (r < minimum) {
      failures.push({text: n.data.trim().slice(0, 60), fg: hex(fg), bg: hex(bg), ratio: Math.round(r * 100) / 100,
        where: el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.getAttribute('class') ? '.' + el.getAttribute('class').replace(/\s+/g, '.') : '')});
    }
  }
  return {checked, failures};
}
