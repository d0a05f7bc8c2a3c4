// Sphinx 9.0's Chinese search data (language_data.js) sets `Stemmer = ChineseStemmer` but
// ships the English stemmer (as its Python side stems Latin words in English): without
// this, search on the Chinese pages stops with "ChineseStemmer is not defined".
"use strict";
var ChineseStemmer = function () {
  return new EnglishStemmer();
};
