// Chinese search without spaces (issue 43). The build cuts the pages' text with jieba and
// the course's own terms as its user dictionary (site/build.py, from the glossary); a
// query typed without spaces ("旋转位置编码") is cut here the same way: each run of Han
// characters, greedily, into the longest words the index holds (its terms and title
// terms), a character the index does not hold being left out as the build leaves it out.
// Latin words and numbers stay as Sphinx's default split gives them. Loaded before
// searchtools.js, which then uses this splitQuery.
"use strict";
var splitQuery = (query) => {
  // Search is searchtools.js's (a top-level const, not a property of window)
  const index = (typeof Search !== "undefined" && Search._index) || {};
  const known = (word) =>
    (index.terms && Object.hasOwn(index.terms, word)) ||
    (index.titleterms && Object.hasOwn(index.titleterms, word));
  const longest = 8; // characters: the longest term tried
  const words = [];
  for (const token of query.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu)) {
    for (const run of token.match(/\p{Script=Han}+|[^\p{Script=Han}]+/gu) || []) {
      if (!/\p{Script=Han}/u.test(run) || run.length < 2 || known(run)) {
        words.push(run);
        continue;
      }
      let at = 0;
      while (at < run.length) {
        let size = Math.min(longest, run.length - at);
        while (size > 1 && !known(run.slice(at, at + size))) size -= 1;
        if (size > 1) words.push(run.slice(at, at + size));
        at += size;
      }
    }
  }
  return words.filter((word) => word);
};
