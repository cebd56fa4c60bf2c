// The desk's only script: answering questions from the keyboard. The page works without it.
// On the questions form: a digit picks that candidate of the current question, Enter takes its
// default; either moves to the next question, and Enter after the last one sends the batch.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("answers");
  if (!form) return;
  const questions = Array.from(form.querySelectorAll("fieldset.question"));
  let current = 0;
  const focus = (k) => {
    questions.forEach((q, i) => q.classList.toggle("current", i === k));
    if (questions[k]) questions[k].focus();
  };
  const next = () => {
    current += 1;
    if (current >= questions.length) {
      form.requestSubmit();
    } else {
      focus(current);
    }
  };
  questions.forEach((q, i) => q.addEventListener("focusin", () => { current = i; }));
  form.addEventListener("keydown", (event) => {
    const q = questions[current];
    if (!q || event.target.matches("input[type=text], input:not([type]), textarea")) {
      if (event.key === "Enter" && q && event.target.matches("input:not([type])")) {
        event.preventDefault();
        next();
      }
      return;
    }
    if (/^[1-9]$/.test(event.key)) {
      const choice = q.querySelector(`input[data-key="${event.key}"]`);
      if (choice) {
        event.preventDefault();
        choice.checked = true;
        next();
      }
    } else if (event.key === "Enter") {
      event.preventDefault();
      const fallback = q.querySelector("input[type=radio][data-default]");
      if (fallback) fallback.checked = true;
      next();
    }
  });
  focus(0);
});
