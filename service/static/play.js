/* The move page, enhanced: tap cards to select them, confirm only a legal selection,
   and follow the opponent's moves without reloading. Without this script the page's
   forms work as they are; everything here only improves them. */
(function () {
  "use strict";

  /* The first wait comes from the page (data-poll-ms, the PAGE_POLL_SECONDS setting); each
     poll that finds nothing new waits longer, up to a minute. */
  var POLL_FIRST_MS = 3000;
  var POLL_MAX_MS = 60000;
  /* How often an open, visible page tells the server it is open (the server counts a
     player present for five minutes after, for the "email me when away" choice). */
  var PRESENT_EVERY_MS = 120000;
  var pollTimer = null;
  var pollDelay = null;
  var pollEtag = null;
  /* A poll, and the page it may fetch, is on its way: one at a time. */
  var polling = false;

  function all(root, selector) {
    return Array.prototype.slice.call(root.querySelectorAll(selector));
  }

  function show(element) {
    if (element) element.hidden = false;
  }

  /* Exchange and swap: checkboxes; Confirm only when the count and the elixir rule are met. */
  function enhanceChoose(form) {
    var countReasons = JSON.parse(form.dataset.countReasons || "{}");
    var elixirReason = form.dataset.elixirReason || "";
    var reason = form.querySelector(".reason");
    var confirm = form.querySelector(".confirm");
    var boxes = all(form, "input[name=cards]");
    var sent = false;

    function update() {
      var chosen = boxes.filter(function (box) { return box.checked; });
      var problem = countReasons[String(chosen.length)] || "";
      var withElixir = chosen.some(function (box) { return box.hasAttribute("data-elixir"); });
      if (!problem && elixirReason && !withElixir) problem = elixirReason;
      confirm.disabled = sent || Boolean(problem);
      reason.textContent = problem || form.dataset.ready;
      reason.classList.toggle("ok", !problem);
      /* Cards still to choose is what to do next, not a fault: no warning colour for it. */
      reason.classList.toggle("hint", chosen.length < Number(form.dataset.choose));
      show(reason);
    }
    boxes.forEach(function (box) { box.addEventListener("change", update); });
    /* Sent once: a second tap while the first is on its way would only be refused as stale.
       The button is disabled after the form has been read, not before (its value goes too). */
    form.addEventListener("submit", function (event) {
      if (sent) {
        event.preventDefault();
        return;
      }
      sent = true;
      window.setTimeout(update, 0);
    });
    update();
  }

  /* Play: a tap selects a card; an elixir lead also needs a named suit; Confirm submits
     the very button the page offers without JavaScript. */
  function enhancePlay(form) {
    var choices = all(form, ".choice");
    var naming = form.querySelector(".naming");
    var names = all(form, ".name-choice");
    var bar = form.querySelector(".confirm-bar");
    var reason = bar.querySelector(".reason");
    var confirm = bar.querySelector(".confirm");
    var selected = null;
    var suit = null;
    /* Once the move is sent, the cards and the button stay as they were until the next page. */
    var sent = false;

    function submitter() {
      if (!selected || selected.dataset.reason) return null;
      var value = selected.dataset.card;
      if (selected.hasAttribute("data-names")) {
        if (!suit) return null;
        value += ":" + suit;
      }
      return form.querySelector('button[name=play][value="' + value + '"]');
    }

    function update() {
      choices.forEach(function (choice) {
        choice.setAttribute("aria-pressed", String(choice === selected));
      });
      names.forEach(function (button) {
        button.setAttribute("aria-pressed", String(button.dataset.suit === suit));
      });
      naming.hidden = !(selected && selected.hasAttribute("data-names"));
      var problem = "";
      if (!selected) problem = form.dataset.pick;
      else if (selected.dataset.reason) problem = selected.dataset.reason;
      else if (!submitter()) problem = form.dataset.name;
      confirm.disabled = sent || Boolean(problem);
      reason.textContent = problem || form.dataset.ready;
      reason.classList.toggle("ok", !problem);
      /* Only a card the rules refuse is a fault; a card or a suit still to pick is a hint. */
      reason.classList.toggle("hint", Boolean(problem) && !(selected && selected.dataset.reason));
    }

    choices.forEach(function (choice) {
      // A card the rules refuse stays selectable, to say why it may not be played.
      choice.disabled = false;
      if (choice.dataset.words) choice.setAttribute("aria-label", choice.dataset.words);
      choice.addEventListener("click", function (event) {
        event.preventDefault();
        if (sent) return;
        selected = selected === choice ? null : choice;
        suit = null;
        update();
      });
    });
    names.forEach(function (button) {
      button.addEventListener("click", function () {
        if (sent) return;
        suit = button.dataset.suit;
        update();
      });
    });
    confirm.addEventListener("click", function () {
      var button = submitter();
      if (button && !sent) {
        sent = true;
        confirm.disabled = true;
        form.requestSubmit(button);
      }
    });
    show(bar);
    update();
  }

  /* The deadline in the reader's own time zone, named as the emails name it, where the page
     gives it in UTC: a time given in the zone the player chose (data-zone) is left as it is. */
  function localTimes(root) {
    var zone = window.Intl && Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!zone) return;
    all(root, "time[datetime]:not([data-zone])").forEach(function (time) {
      var moment = new Date(time.getAttribute("datetime"));
      if (isNaN(moment)) return;
      var lang = document.documentElement.lang;
      var local = moment.toLocaleString(lang, {
        dateStyle: "medium",
        timeStyle: "short",
        timeZone: zone,
      });
      /* French writes the first day of a month as an ordinal, "1er avr.", as the service does. */
      if (lang === "fr" && moment.toLocaleString("en", { day: "numeric", timeZone: zone }) === "1") {
        local = local.replace(/^1(?=\s)/, "1er");
      }
      time.title = time.textContent;
      time.textContent = local + " " + zone + repeatedOffset(moment, zone);
    });
  }

  /* " (GMT-05:00)" for a time the zone's clocks read twice, the night they go back (an hour
     or half an hour apart), as the service names it; "" for any other. */
  function repeatedOffset(moment, zone) {
    function wallClock(at) {
      return at.toLocaleString("en", {
        dateStyle: "short",
        timeStyle: "short",
        hourCycle: "h23",
        timeZone: zone,
      });
    }
    var read = wallClock(moment);
    var twice = [-60, -30, 30, 60].some(function (minutes) {
      return wallClock(new Date(moment.getTime() + minutes * 60000)) === read;
    });
    if (!twice) return "";
    var parts = new Intl.DateTimeFormat(document.documentElement.lang, {
      timeZone: zone,
      timeZoneName: "longOffset",
    }).formatToParts(moment);
    var name = parts.filter(function (part) {
      return part.type === "timeZoneName";
    })[0];
    return name ? " (" + name.value.replace("\u2212", "-") + ")" : "";
  }

  function enhance(game) {
    document.documentElement.classList.add("js");
    all(game, ".js-only").forEach(function (element) {
      if (!element.classList.contains("naming")) show(element);
    });
    /* Enter in the note or on a card to give would press the form's first button: it sends
       nothing. */
    all(game, "#note, input[name=cards]").forEach(function (note) {
      note.addEventListener("keydown", function (event) {
        if (event.key === "Enter") event.preventDefault();
      });
    });
    all(game, "form.choose").forEach(enhanceChoose);
    all(game, "form.play").forEach(enhancePlay);
    localTimes(game);
    schedulePoll();
  }

  /* While the opponent owes a move, ask the API for the game's version; when it
     changes, fetch this page again and swap in its game section. Each step works on the
     game section on the page at that moment, never on one an earlier update replaced. */
  function firstPoll(game) {
    return Number(game.dataset.pollMs) || POLL_FIRST_MS;
  }

  function schedulePoll() {
    window.clearTimeout(pollTimer);
    pollTimer = null;
    var game = document.getElementById("game");
    if (!game || game.dataset.waiting !== "true") return;
    if (pollDelay === null) pollDelay = firstPoll(game);
    pollTimer = window.setTimeout(poll, pollDelay);
  }

  /* A page that is not waiting (the player's move) is polled only when shown again or back
     online, and updated only if the move is no longer the player's: made in another tab, or
     the game ended. A selection in progress is not swept away by the opponent's half of an
     exchange. A failed poll or page waits longer, up to a minute, and tries again. */
  function poll() {
    window.clearTimeout(pollTimer);
    pollTimer = null;
    var game = document.getElementById("game");
    if (polling || !game) return;
    if (document.hidden) {
      schedulePoll();
      return;
    }
    if (pollDelay === null) pollDelay = firstPoll(game);
    polling = true;
    var waiting = game.dataset.waiting === "true";
    /* The ETag of the last view read: an unchanged game answers 304, with no body. */
    var headers = { Accept: "application/json" };
    if (pollEtag) headers["If-None-Match"] = pollEtag;
    fetch(game.dataset.api, { cache: "no-store", headers: headers })
      .then(function (response) {
        if (response.status === 304) return null;
        if (!response.ok) throw new Error("the poll was answered " + response.status);
        pollEtag = response.headers.get("ETag");
        return response.json();
      })
      .then(function (view) {
        var changed = view && String(view.version) !== game.dataset.version;
        if (changed && (waiting || !view.your_turn)) {
          pollDelay = firstPoll(game);
          return refresh();
        }
        pollDelay = Math.min(pollDelay * 1.5, POLL_MAX_MS);
        sayLate(game);
      })
      .catch(function () {
        /* The view read may be newer than the page, which failed: read it whole next time. */
        pollEtag = null;
        pollDelay = Math.min(pollDelay * 2, POLL_MAX_MS);
      })
      .then(function () {
        polling = false;
        schedulePoll();
      });
  }

  /* Against the computer: a move it owes still unmade past the page's data-late-at (no
     worker is making its moves) is said on the page, which stays as it is otherwise. */
  function sayLate(game) {
    var late = game.querySelector("#computer-late");
    if (late && late.hidden && Date.now() >= Date.parse(late.dataset.lateAt)) show(late);
  }

  /* The game's own page, wherever this one was shown: a refused resignation or reminder
     is shown at the address it was posted to, which answers no GET. */
  function refresh() {
    var address = document.getElementById("game").dataset.page;
    return fetch(address, { cache: "no-store", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) throw new Error("the page was answered " + response.status);
        return response.text();
      })
      .then(function (html) {
        var page = new DOMParser().parseFromString(html, "text/html");
        var fresh = page.getElementById("game");
        var game = document.getElementById("game");
        if (!fresh || !game) throw new Error("no game to update");
        var focused = game.contains(document.activeElement) ? document.activeElement : null;
        var focusedAt = focused && place(focused, game);
        var opened = all(game, "details[open]").map(function (details) {
          return place(details, game);
        });
        var notesBefore = lastNote(game);
        var heard = all(game, NEWS).map(spoken);
        game.replaceWith(document.adoptNode(fresh));
        enhance(fresh);
        if (page.title) document.title = page.title; /* the tab says whose move it is */
        /* What the reader had open stays open: the rules, an earlier round. */
        opened.forEach(function (at) {
          var details = found(at, fresh);
          if (details && details.tagName === "DETAILS") details.open = true;
        });
        /* Focus stays on what the reader was on, if the new content has it still; else
           (it would fall to the page's start) it goes to the news. */
        var again = focusedAt && found(focusedAt, fresh);
        if (again) again.focus();
        var status = fresh.querySelector("#status-line");
        if (focused && document.activeElement !== again && status) {
          status.tabIndex = -1;
          status.focus();
        }
        var announce = document.getElementById("announce");
        if (announce) announce.textContent = sentences(fresh, notesBefore, heard);
      });
  }

  /* Where an element is in the game section, to find its like in a new one: from its
     closest ancestor with an id, each step down a tag with its classes and its rank
     among the siblings that have them. */
  function place(element, root) {
    var steps = [];
    for (var node = element; node && node !== root; node = node.parentElement) {
      if (node.id) return { id: node.id, steps: steps };
      var classes = Array.prototype.map.call(node.classList, function (name) {
        return "." + CSS.escape(name);
      });
      var like = node.tagName.toLowerCase() + classes.join("");
      steps.unshift([like, all(node.parentElement, ":scope > " + like).indexOf(node)]);
    }
    return { id: null, steps: steps };
  }

  /* The element at ``at`` (a place()) in ``root``, or null. */
  function found(at, root) {
    var node = at.id ? root.querySelector("#" + CSS.escape(at.id)) : root;
    for (var i = 0; node && i < at.steps.length; i++) {
      node = all(node, ":scope > " + at.steps[i][0])[at.steps[i][1]] || null;
    }
    return node;
  }

  /* The game's news on the page: how it ended, what happened since the player's move. */
  var NEWS = "#outcome-title, .outcome p, .news li";

  /* What changed, as a screen reader says it: how the game ended, what happened since the
     player's move (the cards received, the tricks, the round) that the page before did not
     say already (``heard``), a note the opponent wrote with it, then whose move it is and
     what to do. */
  function sentences(game, notesBefore, heard) {
    var news = all(game, NEWS).filter(function (item) {
      return heard.indexOf(spoken(item)) === -1;
    });
    var note = lastNote(game);
    if (note && note !== notesBefore) {
      news.push(game.querySelector("#notes-title"), game.querySelector(".notes li:last-child"));
    }
    return news.concat(all(game, "#status-line, #status > p:first-of-type"))
      .map(spoken)
      .filter(Boolean)
      .map(function (text) { return /[.!?:]$/.test(text) ? text : text + "."; })
      .join(" ");
  }

  /* The opponent's latest note on the page, if any. */
  function lastNote(game) {
    var item = game.querySelector(".notes li:last-child");
    return item ? item.textContent : "";
  }

  /* An element's text as a screen reader reads it: without what is hidden from it, and an
     image by its name, as a card in a sentence ("6♥", named "6 of hearts"). */
  function spoken(element) {
    var copy = element.cloneNode(true);
    copy.querySelectorAll("[aria-hidden=true]").forEach(function (hidden) { hidden.remove(); });
    copy.querySelectorAll("[role=img][aria-label]").forEach(function (image) {
      image.replaceWith(image.getAttribute("aria-label"));
    });
    return copy.textContent.replace(/\s+/g, " ").trim();
  }

  /* A POST of its own: the GETs that read the game never change anything. */
  function sayPresent() {
    var game = document.getElementById("game");
    if (document.hidden || !game || !game.dataset.seen) return;
    fetch(game.dataset.seen, { method: "POST", cache: "no-store" }).catch(function () {});
  }

  /* Shown again, or back online: look at once, whether or not the page was waiting. */
  function pollNow() {
    var game = document.getElementById("game");
    if (document.hidden || !game) return;
    pollDelay = firstPoll(game);
    poll();
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) sayPresent();
    pollNow();
  });
  window.addEventListener("online", pollNow);

  /* The emails give deadlines in the player's own time zone: tell it once per page load.
     The address is the presence POST's, one step over. */
  function tellTimeZone() {
    var game = document.getElementById("game");
    var zone = window.Intl && Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!game || !game.dataset.seen || !zone) return;
    var url = game.dataset.seen.replace(/\/seen$/, "/time-zone");
    fetch(url, { method: "POST", cache: "no-store", body: new URLSearchParams({ zone: zone }) })
      .catch(function () {});
  }

  var game = document.getElementById("game");
  if (game) enhance(game);
  tellTimeZone();
  sayPresent();
  window.setInterval(sayPresent, PRESENT_EVERY_MS);
})();
