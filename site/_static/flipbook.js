// The flipbooks (site/frames.py): each slider picks a frame drawn at build time by the
// widget's own code. One control moves at a time, as in the sweep that drew the frames:
// moving one puts the others back at the lesson's values.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const book of document.querySelectorAll("figure.flipbook")) {
    const data = JSON.parse(book.querySelector(".flipbook-data").textContent);
    const image = book.querySelector("img");
    const readout = book.querySelector(".flipbook-readout");
    const label = book.getAttribute("aria-label");
    const inputs = [...book.querySelectorAll("input[type=range]")];
    const show = (moved) => {
      inputs.forEach((input, i) => {
        const slider = data.sliders[i];
        if (input !== moved) input.value = slider.start;
        const step = slider.steps[Number(input.value)];
        input.nextElementSibling.textContent = step.label;
        input.setAttribute("aria-valuetext", step.label);
      });
      const i = inputs.indexOf(moved);
      const frame = data.frames[data.sliders[i].steps[Number(moved.value)].frame];
      image.src = `${data.base}/${frame.src}`;
      image.alt = `${label}: ${frame.readout}`;
      readout.textContent = frame.readout;
    };
    for (const input of inputs) input.addEventListener("input", () => show(input));
  }
});

// A formula wider than its column scrolls in its own box (site.css): such a box can be
// reached with the keyboard to scroll it (axe: scrollable-region-focusable).
document.addEventListener("DOMContentLoaded", () => {
  for (const math of document.querySelectorAll("mjx-container")) {
    if (math.scrollWidth > math.clientWidth + 1) math.tabIndex = 0;
  }
});
