// Typeset a built page's math at build time (make site; site/build.py runs this once per
// edition): each HTML file named on the command line is read, its TeX typeset as SVG by
// MathJax (the site's own node_modules/mathjax, in node, no browser), and written back.
// The pages then show their formulas at first paint and load no MathJax at all. The
// same settings as Sphinx gives MathJax in the browser: \( \) inline, \[ \] and $$ $$
// displayed, only inside .math, .output_area and .tex2jax_process elements; with
// "--deck" (the reveal.js decks) $ $ is inline too and the whole slide is read.
"use strict";
const fs = require("fs");
const path = require("path");

const args = process.argv.slice(2);
const deck = args[0] === "--deck";
const files = deck ? args.slice(1) : args;

require("mathjax")
  .init({
    loader: {
      paths: {mathjax: path.join(__dirname, "node_modules/mathjax/es5")},
      // assistive-mml: each formula also as MathML for screen readers (its SVG hidden)
      load: ["adaptors/liteDOM", "input/tex-full", "output/svg", "a11y/assistive-mml"],
    },
    tex: deck
      ? {inlineMath: [["$", "$"], ["\\(", "\\)"]], processEscapes: true}
      : {inlineMath: [["\\(", "\\)"]]},
    svg: {fontCache: "global"},
    options: deck
      ? {}
      : {
          processHtmlClass: "tex2jax_process|mathjax_process|math|output_area",
        },
    startup: {typeset: false},
  })
  .then((MathJax) => {
    const adaptor = MathJax.startup.adaptor;
    for (const file of files) {
      const text = fs.readFileSync(file, "utf8");
      const doctype = (text.match(/^<!DOCTYPE[^>]*>/i) || ["<!DOCTYPE html>"])[0];
      const doc = MathJax.startup.getDocument(text);
      doc.render();
      const count = Array.from(doc.math).length;
      // a formula MathJax gave no MathML twin (its SVG not hidden) is named by its TeX
      for (const math of doc.math) {
        const svg = math.typesetRoot && adaptor.firstChild(math.typesetRoot);
        if (svg && adaptor.kind(svg) === "svg" && !adaptor.getAttribute(svg, "aria-hidden")) {
          adaptor.setAttribute(svg, "aria-label", math.math);
        }
      }
      if (count === 0) continue;
      const html = adaptor.outerHTML(adaptor.root(doc.document));
      fs.writeFileSync(file, `${doctype}\n${html}\n`);
      console.log(`${file}: ${count} formulas`);
    }
  })
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
