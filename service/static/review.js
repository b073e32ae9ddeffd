/* The review, enhanced: one step at a time, with buttons and the arrow keys to move,
   and the step in the address (#step-12) so it can be shared or reloaded. Without
   this script every step is listed one after the other. */
(function () {
  "use strict";

  function start(review) {
    var steps = Array.prototype.slice.call(review.querySelectorAll(".step"));
    var stepper = review.querySelector(".stepper");
    var position = stepper.querySelector(".position");
    var buttons = {};
    Array.prototype.forEach.call(stepper.querySelectorAll("button"), function (button) {
      buttons[button.dataset.go] = button;
    });
    var current = 0;

    function fromHash() {
      var match = /^#step-(\d+)$/.exec(window.location.hash);
      var number = match ? parseInt(match[1], 10) : 1;
      return Math.min(Math.max(number, 1), steps.length) - 1;
    }

    function show(index, remember) {
      current = Math.min(Math.max(index, 0), steps.length - 1);
      steps.forEach(function (step, i) { step.hidden = i !== current; });
      /* Read out as it changes: the step's number, then its heading. */
      var heading = steps[current].querySelector("h2");
      position.textContent = position.dataset.template.replace("{number}", current + 1) +
        (heading ? " · " + heading.textContent.replace(/\s+/g, " ").trim() : "");
      var focused = document.activeElement;
      buttons.first.disabled = buttons.previous.disabled = current === 0;
      buttons.next.disabled = buttons.last.disabled = current === steps.length - 1;
      /* A button that has just been disabled would drop focus to the page's start. */
      if (focused && focused.disabled) {
        (current === 0 ? buttons.next : buttons.previous).focus();
      }
      if (remember) history.replaceState(null, "", "#step-" + (current + 1));
    }

    var moves = {
      first: function () { return 0; },
      previous: function () { return current - 1; },
      next: function () { return current + 1; },
      last: function () { return steps.length - 1; }
    };
    stepper.addEventListener("click", function (event) {
      var go = event.target.dataset && event.target.dataset.go;
      if (go) show(moves[go](), true);
    });
    document.addEventListener("keydown", function (event) {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.key === "ArrowRight") show(current + 1, true);
      else if (event.key === "ArrowLeft") show(current - 1, true);
      else return;
      event.preventDefault();
    });
    window.addEventListener("hashchange", function () { show(fromHash(), false); });
    stepper.hidden = false;
    show(fromHash(), false);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var review = document.getElementById("review");
    if (review && review.querySelector(".step")) start(review);
  });
})();
