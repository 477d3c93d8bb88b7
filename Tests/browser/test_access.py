"""Accessibility checks of the page, run by test_room.py (Tests/browser/README.md, "Accessibility").

axe-core (bundled by PyPI's axe-selenium-python) measures every view against WCAG 2.2 AA in all four languages,
at desktop and phone widths, in the light and dark schemes; the checks after it try by hand what axe cannot see:
what the polite live region says and when, the keyboard's path and focus around dialogs, 200 % text and a 320 px
viewport, reduced motion, and the accessibility tree as a screen reader gets it.
"""

import json
import os
import re
import secrets

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from test_room import (
    DESKTOP, PHONE, by_id, body_data, configure, focus_body, is_joined, join, js, landing_said, open_access,
    press_join, seconds_of, set_viewport, shown_time, wait,
)

LANGUAGES = ("en", "zh-Hans", "zh-Hant", "ko")
WIDTHS = (("desktop", DESKTOP), ("phone", PHONE))
SCHEMES = ("light", "dark")
# WCAG 2.2 AA: axe's rules tagged for the levels A and AA of 2.0, 2.1 and 2.2.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def emulate(driver, dark=False, reduced_motion=True):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
        {"name": "prefers-color-scheme", "value": "dark" if dark else "light"},
        {"name": "prefers-reduced-motion", "value": "reduce" if reduced_motion else "no-preference"},
    ]})


def axe_source():
    """axe.min.js as axe-selenium-python ships it."""
    import axe_selenium_python

    path = os.path.join(os.path.dirname(axe_selenium_python.__file__), "node_modules", "axe-core", "axe.min.js")
    with open(path, encoding="utf-8") as f:
        return f.read()


def axe_run(driver, source):
    """axe's violations of WCAG 2.2 AA on the page as it stands: [(rule, [targets])]."""
    if not js(driver, "return typeof window.axe === 'object'"):
        js(driver, source)
    result = driver.execute_async_script(
        """const done = arguments[arguments.length - 1];
           // The tags this axe knows (the one axe-selenium-python bundles predates WCAG 2.2's own tags).
           const known = new Set(axe.getRules().flatMap(r => r.tags));
           axe.run(document, {runOnly: {type: 'tag', values: arguments[0].filter(t => known.has(t))}, resultTypes: ['violations']})
              .then(r => done(JSON.stringify(r.violations.map(v => [v.id, v.nodes.map(n => n.target.join(' '))]))))
              .catch(e => done(JSON.stringify([['axe-error', [String(e)]]])));""",
        AXE_TAGS,
    )
    return json.loads(result)


def choose_language(driver, lang):
    # Through the picker's own change event: the wall display hides the picker.
    js(driver, """const s = document.getElementById('lang-select');
                  if (s.value !== arguments[0]) { s.value = arguments[0]; s.dispatchEvent(new Event('change')); }""", lang)
    wait(driver, lambda d: js(d, "return document.documentElement.lang") == lang, f"the page in {lang}")


def announcements(driver):
    """Everything the polite announcer has said since record_announcements."""
    return js(driver, "return window.__said || []")


def record_announcements(driver):
    js(driver, """window.__said = [];
                  const box = document.getElementById('announcer');
                  new MutationObserver(() => { if (box.textContent) window.__said.push(box.textContent); })
                    .observe(box, {childList: true, characterData: true, subtree: true});""")


def active_id(driver):
    return js(driver, "const a = document.activeElement; return a ? (a.id || a.tagName.toLowerCase()) : null")


def ax_tree(driver):
    """Chromium's accessibility tree (CDP), as [(role, name)] of the nodes a screen reader is given."""
    nodes = driver.execute_cdp_cmd("Accessibility.getFullAXTree", {})["nodes"]
    out = []
    for node in nodes:
        if node.get("ignored"):
            continue
        role = node.get("role", {}).get("value", "")
        name = node.get("name", {}).get("value", "")
        if role in ("generic", "none", "InlineTextBox", "LineBreak") and not name:
            continue
        out.append((role, name))
    return out


class AccessChecks:
    """The checks, each given the test run (its server address, fresh browsers, screenshots)."""

    def __init__(self, run):
        self.run = run
        self.base = run.base
        self.counts = {}  # view -> violations over every language, width and scheme

    # MARK: axe

    def measure(self, driver, view, source, languages=LANGUAGES):
        """axe on the view as it stands in every language, width and scheme; the failures named."""
        found = []
        runs = 0
        for lang in languages:
            choose_language(driver, lang)
            for width_name, (w, h) in WIDTHS:
                set_viewport(driver, w, h)
                for scheme in SCHEMES:
                    emulate(driver, dark=scheme == "dark")
                    runs += 1
                    for rule, targets in axe_run(driver, source):
                        found.append(f"{lang} {width_name} {scheme}: {rule} at {', '.join(targets[:3])}")
        set_viewport(driver, *DESKTOP)
        emulate(driver)
        choose_language(driver, "en")
        self.counts[view] = len(found)
        print(f"  axe {view}: {len(found)} violations in {runs} runs")
        for line in sorted(set(f.split(": ", 1)[1] for f in found))[:8]:
            print(f"    {line}")
        return found

    def axe_every_view(self):
        source = axe_source()
        room = "axe-" + secrets.token_hex(3)
        locked = "axe-lock-" + secrets.token_hex(3)
        a = self.run.own_driver("axe A")
        b = self.run.own_driver("axe B")
        problems = []
        try:
            a.get(f"{self.base}/r/{room}")
            wait(a, lambda d: by_id(d, "room-input").get_attribute("value") == room, "the landing page")
            problems += self.measure(a, "landing", source)
            join(a, self.base, f"/r/{room}", "Ada")
            problems += self.measure(a, "room idle", source)
            a.find_element(By.CSS_SELECTOR, "#alerts-details > summary").click()
            problems += self.measure(a, "sound settings", source)
            a.find_element(By.CSS_SELECTOR, "#alerts-details > summary").click()
            by_id(a, "btn-stats").click()
            wait(a, lambda d: by_id(d, "stats-empty").is_displayed() or by_id(d, "stats-content").is_displayed(),
                 "the stats panel")
            problems += self.measure(a, "stats", source)
            by_id(a, "btn-stats").click()
            js(a, "document.querySelector('.schedule-card').scrollIntoView()")
            problems += self.measure(a, "schedule card", source)
            # The Webhooks card, with a webhook listed (its switch, test and remove buttons) and a refused URL.
            js(a, "document.querySelector('.webhook-card').scrollIntoView()")
            wait(a, lambda d: by_id(d, "webhook-card").is_displayed(), "the webhooks card")
            by_id(a, "webhook-url").send_keys("not a url")
            by_id(a, "webhook-add").click()
            wait(a, lambda d: by_id(d, "webhook-error").text != "", "the URL refused")
            by_id(a, "webhook-url").clear()
            # A name on this machine: the server, run without --webhook-allow-private, refuses to connect to it.
            by_id(a, "webhook-url").send_keys("http://localhost:9/services/T0/B0/x")
            by_id(a, "webhook-url").send_keys(Keys.ENTER)
            wait(a, lambda d: by_id(d, "webhook-secret").is_displayed()
                 and len(d.find_elements(By.CSS_SELECTOR, "#webhook-list li")) == 1, "the webhook listed")
            problems += self.measure(a, "webhooks card", source)
            by_id(a, "btn-toggle").click()
            wait(a, lambda d: body_data(d, "status") == "running", "the focus to run")
            problems += self.measure(a, "room running", source)
            focus_body(a)
            ActionChains(a).send_keys("?").perform()
            wait(a, lambda d: by_id(d, "keys-dialog").get_attribute("open") is not None, "the keys' help")
            problems += self.measure(a, "help", source)
            ActionChains(a).send_keys(Keys.ESCAPE).perform()
            wait(a, lambda d: by_id(d, "keys-dialog").get_attribute("open") is None, "the help to close")
            by_id(a, "btn-skip").click()
            wait(a, lambda d: body_data(d, "phase") == "shortBreak", "the break")
            problems += self.measure(a, "room break", source)
            # The wall display watches the same room.
            b.get(f"{self.base}/r/{room}?view=tv")
            wait(b, lambda d: body_data(d, "tv") == "on" and body_data(d, "phase") == "shortBreak", "the wall display")
            problems += self.measure(b, "wall display", source)
            # A locked room with host-only controls, as someone who is not the host sees it.
            b.get(f"{self.base}/r/{locked}")
            wait(b, lambda d: landing_said(d, locked), "the landing page, its line about the room shown")
            by_id(b, "name-input").clear()
            by_id(b, "name-input").send_keys("Hana")
            open_access(b)
            by_id(b, "passcode-input").send_keys("tomato soup")
            by_id(b, "host-only-input").click()
            press_join(b)
            wait(b, is_joined, "the host in the locked room")
            a.get(f"{self.base}/r/{locked}")
            wait(a, lambda d: landing_said(d, locked), "the landing page, its line about the room shown")
            press_join(a)
            wait(a, lambda d: by_id(d, "passcode-error").is_displayed(), "the locked room's refusal")
            problems += self.measure(a, "locked room (refused)", source)
            by_id(a, "passcode-input").send_keys("tomato soup")
            press_join(a)
            wait(a, is_joined, "in the locked room")
            wait(a, lambda d: by_id(d, "host-note").is_displayed(), "the host-only note")
            problems += self.measure(a, "locked room (member)", source)
            problems += self.measure(b, "locked room (host)", source, languages=("en", "ko"))
        finally:
            self.run.done_with(a)
            self.run.done_with(b)
        path = os.path.join(self.run.out, "axe.txt")
        with open(path, "w", encoding="utf-8") as f:
            for view, n in self.counts.items():
                f.write(f"{view}: {n}\n")
            f.write("\n".join(problems) + "\n")
        assert not problems, f"{len(problems)} axe violations, e.g.:\n    " + "\n    ".join(problems[:12])

    # MARK: what axe cannot see: the live region

    def said_wait(self, driver, condition, what, timeout=10):
        try:
            wait(driver, condition, what, timeout=timeout)
        except AssertionError as error:
            raise AssertionError(f"{error}; said: {announcements(driver)}") from None

    def announcements(self):
        """Phase changes, starts, pauses and resumes, the one-minute warning, the time left at whole minutes and on
        L, a task changed elsewhere, and being removed, each said once through the polite live region; the
        countdown never."""
        room = "say-" + secrets.token_hex(3)
        a = self.run.own_driver("say A")
        b = self.run.own_driver("say B")
        try:
            join(a, self.base, f"/r/{room}", "Ada")
            join(b, self.base, f"/r/{room}", "Lin")
            live = js(a, "const e = document.getElementById('announcer'); return [e.getAttribute('aria-live'), e.getAttribute('role')]")
            assert live[0] == "polite", live
            assert js(a, "return document.getElementById('time').getAttribute('aria-live')") in (None, "off"), \
                "the countdown must not be a live region"
            # The sound off: what is said must not depend on it.
            focus_body(a)
            ActionChains(a).send_keys("m").perform()
            wait(a, lambda d: by_id(d, "btn-sound").get_attribute("aria-pressed") == "false", "the sound off")
            # A phase of 1:06 with the time said every minute: six seconds before the minute is crossed.
            configure(b, "1:06", "0:05", "0:10")
            a.find_element(By.CSS_SELECTOR, "#alerts-details > summary").click()
            Select(by_id(a, "speak-select")).select_by_value("1")
            a.find_element(By.CSS_SELECTOR, "#alerts-details > summary").click()
            record_announcements(a)
            by_id(b, "btn-toggle").click()
            self.said_wait(a, lambda d: any("Lin started the timer." in x for x in announcements(d)), "the start, said")
            started = [x for x in announcements(a) if "started the timer" in x][0]
            assert re.fullmatch(r"Lin started the timer\. Focus, (1 minute|\d+ seconds) left, ends \d\d:\d\d( [AP]M)?\.", started), started
            # The countdown runs; nothing more is said for seconds on end (until the minute is crossed).
            before = seconds_of(shown_time(a))
            wait(a, lambda d: seconds_of(shown_time(d)) <= before - 2, "two seconds to pass")
            assert len(announcements(a)) == 1, announcements(a)
            # Crossing one minute left: the warning, and the minute chosen to be said.
            self.said_wait(a, lambda d: "Focus ends in a minute." in announcements(d), "the one-minute warning, said")
            self.said_wait(a, lambda d: "Focus: 1 minute left" in announcements(d), "the whole minute, said")
            # Paused by Lin; then L asks for the time left.
            by_id(b, "btn-toggle").click()
            self.said_wait(a, lambda d: any(x.startswith("Lin paused. Focus, paused with") for x in announcements(d)), "the pause, said")
            focus_body(a)
            ActionChains(a).send_keys("l").perform()
            self.said_wait(a, lambda d: any(re.fullmatch(r"Focus, paused with (\d+ seconds|1 minute) left, 2 people here", x) for x in announcements(d)),
                 "L: the time left, said")  # noqa
            by_id(b, "btn-toggle").click()
            self.said_wait(a, lambda d: any(x.startswith("Lin resumed. Focus,") for x in announcements(d)), "the resume, said")
            # The focus ends: said, with the sound off, and written in the activity too.
            self.said_wait(a, lambda d: "Focus complete. Short break is next." in announcements(d), "the phase change, said", timeout=90)
            assert any("Focus complete" in line for line in js(a, "return [...document.querySelectorAll('#activity li')].map(l => l.textContent)"))
            said = announcements(a)
            assert len(said) == len(set(said)), f"something was said twice: {said}"
            self.run.shot(a, "announce-break.png")
            # Korean: the same sentences in the page's language.
            choose_language(a, "ko")
            record_announcements(a)
            focus_body(a)
            ActionChains(a).send_keys("l").perform()
            self.said_wait(a, lambda d: any("짧은 휴식 시작 준비" in x and "2명 참여 중" in x for x in announcements(d)), "L in Korean")
            choose_language(a, "en")
        finally:
            self.run.done_with(a)
            self.run.done_with(b)

    def task_changed_elsewhere_and_removed(self):
        """My task changed where I was not looking (another tab took the member over and changed it): said when
        this page takes the member back. The host removing me: said, and the landing says what happened."""
        room = "task-" + secrets.token_hex(3)
        host = self.run.own_driver("task host")
        a1 = self.run.own_driver("task A1")
        a2 = self.run.own_driver("task A2")
        try:
            join(host, self.base, f"/r/{room}", "Hana")
            join(a1, self.base, f"/r/{room}", "Ada")
            task = by_id(a1, "my-task")
            task.click()
            task.send_keys("write", Keys.ENTER)
            wait(host, lambda d: "write" in js(d, "return document.getElementById('members').textContent"), "the task")
            # The same member in another browser: its token, then the room.
            token = js(a1, f"return localStorage.getItem('pomodoro.token.{room}')")
            a2.get(f"{self.base}/")
            js(a2, f"localStorage.setItem('pomodoro.token.{room}', arguments[0]); localStorage.setItem('pomodoro.name', 'Ada')", token)
            a2.get(f"{self.base}/r/{room}")
            wait(a2, is_joined, "the second tab in the room")
            wait(a1, lambda d: body_data(d, "conn") == "replaced", "the first tab replaced")
            record_announcements(a1)
            task2 = by_id(a2, "my-task")
            task2.click()
            task2.send_keys(Keys.CONTROL, "a")
            task2.send_keys("review", Keys.ENTER)
            wait(host, lambda d: "review" in js(d, "return document.getElementById('members').textContent"), "the new task")
            by_id(a1, "btn-use-here").click()
            wait(a1, is_joined, "the first tab back")
            wait(a1, lambda d: "Your task was changed to “review”" in announcements(d), "the changed task, said")
            # My own change is not news.
            record_announcements(a1)
            task = by_id(a1, "my-task")
            task.click()
            task.send_keys(Keys.CONTROL, "a")
            task.send_keys("ship", Keys.ENTER)
            wait(host, lambda d: "ship" in js(d, "return document.getElementById('members').textContent"), "my own task")
            wait(a1, lambda d: js(d, "return document.getElementById('my-task').dataset.saved") == "ship", "the echo")
            assert not any("task" in x for x in announcements(a1)), announcements(a1)
            # Removed by the host (the confirmation answered yes).
            ada = js(host, "return [...document.querySelectorAll('#members > li')].find(li => li.querySelector('.member-name').textContent === 'Ada').dataset.memberId")
            js(host, "window.confirm = () => true")
            host.find_element(By.CSS_SELECTOR, f'#members > li[data-member-id="{ada}"] .remove-member').click()
            wait(a1, lambda d: any(re.fullmatch(r"The host removed you from this room; you may join again in 10 minutes\.", x)
                                   for x in announcements(d)), "the removal, said with the wait")
            wait(a1, lambda d: by_id(d, "landing").is_displayed() and by_id(d, "join-error").is_displayed(), "the landing, saying why")
        finally:
            for d in (host, a1, a2):
                self.run.done_with(d)

    def landing_says_what_is_happening(self):
        """From an invite link, before joining: what the room is doing, that it is locked, or new; and errors say
        what to do next, in the page's language."""
        room = "now-" + secrets.token_hex(3)
        locked = "now-lock-" + secrets.token_hex(3)
        a = self.run.own_driver("now A")
        b = self.run.own_driver("now B")
        try:
            join(a, self.base, f"/r/{room}", "Ada")
            by_id(a, "btn-toggle").click()
            wait(a, lambda d: body_data(d, "status") == "running", "the focus to run")
            b.get(f"{self.base}/r/{room}")
            wait(b, lambda d: by_id(d, "landing-now").is_displayed(), "what is happening in the room")
            text = by_id(b, "landing-now").text
            assert re.fullmatch(r"Now in this room: Focus, 25 minutes left, ends \d\d:\d\d( [AP]M)?, 1 person here\.", text), text
            assert "landing-now" in by_id(b, "room-input").get_attribute("aria-describedby")
            # The lines about the room come a moment after the page: shown or not, they move nothing one aims at.
            tops = js(b, """const lines = ['landing-now', 'landing-next'].map((id) => document.getElementById(id));
                const was = lines.map((line) => [line.hidden, line.textContent]);
                const tops = () => ['room-input', 'name-input', 'btn-join']
                    .map((id) => document.getElementById(id).getBoundingClientRect().top);
                lines.forEach((line) => { line.hidden = true; });
                const without = tops();
                lines.forEach((line) => { line.hidden = false; line.textContent ||= 'Next: Standup, Monday 09:00 (in 3 days)'; });
                const with_ = tops();
                lines.forEach((line, i) => { [line.hidden, line.textContent] = was[i]; });
                return [without, with_]""")
            assert tops[0] == tops[1], f"the room field, the name field and Join moved: {tops[0]} -> {tops[1]}"
            self.run.shot(b, "landing-now.png")
            choose_language(b, "zh-Hant")
            b.refresh()
            wait(b, lambda d: by_id(d, "landing-now").is_displayed() and by_id(d, "landing-now").text.startswith("這個房間現在：專注"),
                 "the same in Traditional Chinese")
            choose_language(b, "en")
            # A locked room says so, and where the passcode goes.
            a.get(f"{self.base}/r/{locked}")
            wait(a, lambda d: landing_said(d, locked), "the landing, its line about the room shown")
            open_access(a)
            by_id(a, "passcode-input").send_keys("tomato soup")
            press_join(a)
            wait(a, is_joined, "in the locked room")
            b.get(f"{self.base}/r/{locked}")
            wait(b, lambda d: by_id(d, "landing-now").is_displayed(), "the locked room's line")
            assert by_id(b, "landing-now").text == "This room is locked: open “Passcode and host control” and enter its passcode.", \
                by_id(b, "landing-now").text
        finally:
            self.run.done_with(a)
            self.run.done_with(b)

    # MARK: the keyboard

    def tab_order(self, driver, limit=120):
        """The ids (or tags) Tab visits from the skip link at the top until it comes round to it again, each with
        whether it showed a visible focus indicator. Leaving the page (the browser's own controls) is passed over."""
        probe = """const a = document.activeElement;
            if (!a || a === document.body) return null;
            const s = getComputedStyle(a);
            const visible = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none'
              || (!!a.closest('.lang-picker') && getComputedStyle(a.closest('.lang-picker')).outlineStyle !== 'none')
              || (a.matches('.switch input') && getComputedStyle(a.nextElementSibling).outlineStyle !== 'none')
              // The clock button inside a time field (its own Tab stop, in the browser's shadow tree, where
              // styles cannot be read): style.css gives it an outline on :focus-visible.
              || (a.matches('input[type=time], input[type=date]') && !a.matches(':focus'));
            return [a.id || a.tagName.toLowerCase() + (a.className ? '.' + String(a.className).split(' ')[0] : ''), visible];"""
        js(driver, "window.scrollTo(0, 0); document.querySelector('.skip-link').focus()")
        seen = [js(driver, probe)]
        outside = 0
        for _ in range(limit):
            ActionChains(driver).send_keys(Keys.TAB).perform()
            info = js(driver, probe)
            if info is None:
                outside += 1
                assert outside < 5, "Tab left the page and did not come back"
                continue
            if info[0] == seen[0][0]:
                break
            seen.append(info)
        return seen

    def keyboard_alone(self):
        """The whole flow with the keyboard only: an invite link with a remembered name joins with Enter, space
        starts, s skips to the break, Tab reaches every control in a sensible order with a visible focus, the
        dialogs take the focus and give it back, and nothing traps it. Then the stats, opened with Enter."""
        room = "kbd-" + secrets.token_hex(3)
        d = self.run.own_driver("keyboard")
        try:
            d.get(f"{self.base}/")
            js(d, "localStorage.setItem('pomodoro.name', 'Kai')")
            d.get(f"{self.base}/r/{room}")
            # One step: the join button has the focus, the room is the link's and the name remembered.
            wait(d, lambda x: active_id(x) == "btn-join", "the focus on Join")
            assert by_id(d, "name-input").get_attribute("value") == "Kai"
            wait(d, lambda x: by_id(x, "landing-now").is_displayed(), "what is happening in the room")
            assert by_id(d, "landing-now").text == "Nobody is in this room yet: joining opens it.", by_id(d, "landing-now").text
            landing = [x[0] for x in self.tab_order(d)]
            for wanted in ("room-input", "btn-random-room", "name-input", "btn-join"):
                assert wanted in landing, f"{wanted} not reached by Tab: {landing}"
            assert landing.index("room-input") < landing.index("name-input") < landing.index("btn-join"), landing
            js(d, "document.getElementById('btn-join').focus()")
            ActionChains(d).send_keys(Keys.ENTER).perform()
            wait(d, is_joined, "joined with Enter")
            # The Join button went with the landing: the focus is on the timer's button, not lost to the page.
            wait(d, lambda x: active_id(x) == "btn-toggle", "the focus on Start after joining")
            wait(d, lambda x: by_id(x, "empty-room").is_displayed(), "the empty room's sentence")
            assert "copy the invite link" in by_id(d, "empty-room").text, by_id(d, "empty-room").text
            # Space starts (reset and skip are off while idle); then every control is reached by Tab, each shows
            # where the focus is, and Tab comes round (no trap).
            focus_body(d)
            ActionChains(d).send_keys(Keys.SPACE).perform()
            wait(d, lambda x: body_data(x, "status") == "running", "space to start")
            order = self.tab_order(d)
            ids = [x[0] for x in order]
            for wanted in ("btn-invite", "btn-tv", "btn-sound", "lang-select", "btn-reset", "btn-toggle", "btn-skip",
                           "btn-keys", "btn-away", "my-task", "schedule-name", "btn-stats", "btn-leave"):
                assert wanted in ids, f"{wanted} not reached by Tab: {ids}"
            assert ids.index("btn-reset") < ids.index("btn-toggle") < ids.index("btn-skip") < ids.index("btn-stats") < ids.index("btn-leave"), ids
            hidden = [x[0] for x in order if not x[1]]
            assert not hidden, f"no visible focus on: {hidden}"
            assert len(order) < 120, "Tab never came round: a trap?"
            # The keys' help from its button: focus inside, Tab stays inside, Escape gives it back.
            js(d, "document.getElementById('btn-keys').focus()")
            ActionChains(d).send_keys(Keys.ENTER).perform()
            wait(d, lambda x: by_id(x, "keys-dialog").get_attribute("open") is not None, "the keys' help")
            assert active_id(d) == "btn-keys-close", active_id(d)
            for _ in range(3):
                ActionChains(d).send_keys(Keys.TAB).perform()
                assert js(d, "return document.getElementById('keys-dialog').contains(document.activeElement) || document.activeElement === document.body"), active_id(d)
            text = by_id(d, "keys-list").text
            assert "Say the time left" in text and "L" in text, text
            # The keys are on the buttons too, where screen readers say them (aria-keyshortcuts).
            shortcuts = js(d, """return Object.fromEntries([...document.querySelectorAll('[aria-keyshortcuts]')]
                                   .map(e => [e.id || e.dataset.extend, e.getAttribute('aria-keyshortcuts')]))""")
            assert shortcuts == {"btn-sound": "M", "btn-reset": "R", "btn-toggle": "Space", "btn-skip": "S", "60": "1 +",
                                 "180": "3", "300": "5", "btn-keys": "?", "btn-away": "A"}, shortcuts
            ActionChains(d).send_keys(Keys.ESCAPE).perform()
            wait(d, lambda x: by_id(x, "keys-dialog").get_attribute("open") is None, "the help to close")
            wait(d, lambda x: active_id(x) == "btn-keys", "the focus back on the button that opened the help")
            # s skips to the break; the reset button asks, Escape keeps the timer, focus back on reset.
            focus_body(d)
            ActionChains(d).send_keys("s").perform()
            wait(d, lambda x: body_data(x, "phase") == "shortBreak", "s to skip to the break")
            js(d, "document.getElementById('btn-reset').focus()")
            ActionChains(d).send_keys(Keys.ENTER).perform()
            wait(d, lambda x: by_id(x, "reset-dialog").get_attribute("open") is not None, "the reset question")
            assert active_id(d) == "btn-reset-cancel", active_id(d)
            ActionChains(d).send_keys(Keys.ESCAPE).perform()
            wait(d, lambda x: by_id(x, "reset-dialog").get_attribute("open") is None, "the question to close")
            wait(d, lambda x: active_id(x) == "btn-reset", "the focus back on reset")
            assert body_data(d, "phase") == "shortBreak", "Escape reset the timer"
            # The stats with Enter.
            js(d, "document.getElementById('btn-stats').focus()")
            ActionChains(d).send_keys(Keys.ENTER).perform()
            wait(d, lambda x: by_id(x, "btn-stats").get_attribute("aria-expanded") == "true", "the stats, opened")
            wait(d, lambda x: by_id(x, "stats-empty").is_displayed() or by_id(x, "stats-content").is_displayed(), "the stats")
        finally:
            self.run.done_with(d)

    # MARK: large text, narrow screens, motion, colour

    def no_horizontal_scroll(self, driver, what):
        widths = js(driver, "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] <= widths[1], f"{what}: the page scrolls sideways ({widths[0]} px in {widths[1]})"
        clipped = js(driver, """return [...document.querySelectorAll('#time, #btn-toggle, #btn-reset, #btn-skip, .extend .btn, #lang-select, #phase-label, #btn-join, h1, .members-card h2, #btn-invite, #btn-tv')]
            .filter(e => e.offsetParent !== null)
            .filter(e => { const r = e.getBoundingClientRect(); return r.left < -1 || r.right > document.documentElement.clientWidth + 1; })
            .map(e => e.id || e.tagName)""")
        assert not clipped, f"{what}: cut off at the sides: {clipped}"

    def full_shot(self, driver, name):
        """The whole page, as long as it is, at the viewport's width."""
        import base64
        path = os.path.join(self.run.out, name)
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        print(f"  screenshot {path}")

    def skip_link_out_of_sight(self, driver, what):
        """The skip link shows only with the focus: however many lines its words take, none peeks in at the top."""
        bottom = js(driver, """const link = document.querySelector('.skip-link');
            if (document.activeElement === link) link.blur();
            return link.getBoundingClientRect().bottom + scrollY""")
        assert bottom < 1, f"{what}: the skip link shows without the focus (its bottom at {bottom:.0f} px)"

    def large_text_and_narrow_screens(self):
        """Text at 200 % (at 1280, 640, 375 and 320 px) and a 320 px viewport: nothing scrolls sideways, nothing is
        cut off, the skip link stays out of sight until focused; screenshots."""
        room = "zoom-" + secrets.token_hex(3)
        d = self.run.own_driver("zoom")
        try:
            d.get(f"{self.base}/r/{room}")
            wait(d, lambda x: by_id(x, "room-input").get_attribute("value") == room, "the landing page")
            set_viewport(d, 320, 640, mobile=True)
            self.no_horizontal_scroll(d, "the landing at 320 px")
            self.run.shot(d, "landing-320.png")
            set_viewport(d, 375, 800, mobile=True)
            js(d, "document.documentElement.style.fontSize = '200%'")
            self.no_horizontal_scroll(d, "the landing at 375 px with text at 200 %")
            set_viewport(d, 320, 640, mobile=True)
            self.no_horizontal_scroll(d, "the landing at 320 px with text at 200 %")
            self.skip_link_out_of_sight(d, "the landing at 320 px with text at 200 %")
            js(d, "document.documentElement.style.fontSize = ''")
            set_viewport(d, *DESKTOP)
            join(d, self.base, f"/r/{room}", "Zoe")
            by_id(d, "btn-toggle").click()
            wait(d, lambda x: body_data(x, "status") == "running", "running")
            for lang in ("en", "ko"):
                choose_language(d, lang)
                set_viewport(d, 320, 640, mobile=True)
                self.no_horizontal_scroll(d, f"the room at 320 px ({lang})")
                self.full_shot(d, f"room-320-{lang}.png")
                set_viewport(d, *DESKTOP)
                # Text at 200 %: the root size doubled (every size is in rem), at desktop width and at 640 px.
                js(d, "document.documentElement.style.fontSize = '200%'")
                self.no_horizontal_scroll(d, f"the room with text at 200 % ({lang})")
                self.full_shot(d, f"room-text-200-{lang}.png")
                set_viewport(d, 640, 800)
                self.no_horizontal_scroll(d, f"the room with text at 200 % in 640 px ({lang})")
                # A phone of 375 px with text at 200 %: the language picker goes to a line of its own, the
                # main button above reset and skip, the +N chips wrap (WCAG 1.4.10: no sideways scrolling).
                set_viewport(d, 375, 1200, mobile=True)
                self.no_horizontal_scroll(d, f"the room with text at 200 % in 375 px ({lang})")
                rows = js(d, """const top = (id) => document.getElementById(id).getBoundingClientRect().top;
                    return [top('btn-toggle') < top('btn-reset'), Math.abs(top('btn-reset') - top('btn-skip')) < 1]""")
                assert rows == [True, True], f"the main button above reset and skip, those two side by side ({lang}): {rows}"
                self.run.shot(d, f"room-375-text-200-{lang}.png")
                # The narrowest phone, 320 px, with text at 200 % (WCAG 1.4.10's own case): the room's name on a
                # line, the invite and wall-display buttons together on the next, nothing past the edge.
                set_viewport(d, 320, 1200, mobile=True)
                self.no_horizontal_scroll(d, f"the room with text at 200 % in 320 px ({lang})")
                self.skip_link_out_of_sight(d, f"the room with text at 200 % in 320 px ({lang})")
                self.full_shot(d, f"room-320-text-200-{lang}.png")
                js(d, "document.documentElement.style.fontSize = ''")
                set_viewport(d, *DESKTOP)
            choose_language(d, "en")
        finally:
            self.run.done_with(d)

    def motion_and_schemes(self):
        """prefers-reduced-motion turns every transition and animation off (and without it they run);
        prefers-color-scheme picks the dark colours; the phase is a word and a shape as well as a colour; the
        ring stands out 3:1 from the card in every phase and scheme."""
        room = "motion-" + secrets.token_hex(3)
        d = self.run.own_driver("motion")
        moving = """return [...document.querySelectorAll('*')].filter(e => {
                        const s = getComputedStyle(e);
                        return s.transitionDuration.split(',').some(x => parseFloat(x) > 0)
                          || (s.animationName !== 'none' && parseFloat(s.animationDuration) > 0);
                      }).length"""
        try:
            join(d, self.base, f"/r/{room}", "Mo")
            by_id(d, "btn-toggle").click()
            wait(d, lambda x: body_data(x, "status") == "running", "running")
            by_id(d, "btn-toggle").click()
            wait(d, lambda x: body_data(x, "status") == "paused", "paused (the digits breathe)")
            emulate(d, reduced_motion=False)
            assert js(d, moving) > 0, "nothing moves even without reduced motion: the check below could not fail"
            emulate(d, reduced_motion=True)
            assert js(d, moving) == 0, f"{js(d, moving)} elements still move with reduced motion"
            self.run.shot(d, "room-reduced-motion.png")
            # Colour schemes.
            emulate(d, dark=False)
            light = js(d, "return getComputedStyle(document.querySelector('.timer-card')).backgroundColor")
            emulate(d, dark=True)
            dark = js(d, "return getComputedStyle(document.querySelector('.timer-card')).backgroundColor")
            assert light != dark and luminance(dark) < 0.1 < luminance(light), (light, dark)
            self.run.shot(d, "room-dark-a11y.png")
            # The phase: word, shape, colour; the ring against the card.
            shapes = {}
            for phase in ("focus", "shortBreak", "longBreak"):
                js(d, "document.body.dataset.phase = arguments[0]", phase)
                shapes[phase] = js(d, "return getComputedStyle(document.getElementById('phase-label'), '::before').clipPath")
                for dark_scheme in (False, True):
                    emulate(d, dark=dark_scheme)
                    ring, card = js(d, """return [getComputedStyle(document.getElementById('ring-progress')).stroke,
                                                  getComputedStyle(document.querySelector('.timer-card')).backgroundColor]""")
                    ratio = contrast(ring, card)
                    assert ratio >= 3, f"the ring of {phase} ({'dark' if dark_scheme else 'light'}): {ring} on {card} is {ratio:.2f}:1"
            emulate(d)
            assert len(set(shapes.values())) == 3, f"the phases' shapes are not all different: {shapes}"
            js(d, "document.body.dataset.phase = 'focus'")
            assert by_id(d, "phase-label").text == "Focus"
        finally:
            self.run.done_with(d)

    # MARK: the accessibility tree

    # MARK: WCAG 2.2's own criteria, which the bundled axe predates

    TARGETS = """return [...document.querySelectorAll(
            'button, a[href], input:not([type=hidden]), select, textarea, summary, [role=switch], [role=button], [tabindex="0"]')]
        .filter(e => e.checkVisibility({checkOpacity: true, checkVisibilityCSS: true}))
        .filter(e => !e.closest('p, li > span'))  // links inside a sentence are exempt (2.5.8, inline)
        // A box or switch inside its label is operated by the whole label, as a pointer sees it.
        .map(e => { const r = (e.matches('label > input[type=checkbox], label > input[type=radio]') ? e.parentElement
                               : e.matches('.switch input') ? e.parentElement : e).getBoundingClientRect();
                    return [e.id || e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ')[0] : ''),
                            r.left, r.top, r.width, r.height]; })
        .filter(t => t[3] > 0 && t[4] > 0)"""

    def small_targets(self, driver):
        """Targets under 24 x 24 CSS px whose 24 px circle, centred on them, meets another target (2.5.8)."""
        targets = js(driver, self.TARGETS)
        small = []
        for name, x, y, w, h in targets:
            if w >= 24 and h >= 24:
                continue
            cx, cy = x + w / 2, y + h / 2
            for other, ox, oy, ow, oh in targets:
                if (other, ox, oy) == (name, x, y):
                    continue
                # The distance from the circle's centre to the other target's box.
                dx = max(ox - cx, 0, cx - (ox + ow))
                dy = max(oy - cy, 0, cy - (oy + oh))
                if (dx * dx + dy * dy) ** 0.5 < 12:
                    small.append(f"{name} ({w:.0f}x{h:.0f}) beside {other}")
                    break
        return small

    def focus_hidden(self, driver):
        """Tab through the page; each focused control must not be entirely hidden by something drawn over it
        (2.4.11): at least one of five points of it shows the control itself."""
        hidden = []
        probe = """const a = document.activeElement;
            if (!a || a === document.body) return null;
            const r = a.getBoundingClientRect();
            if (r.width === 0 || r.height === 0) return [a.id || a.tagName, true];
            const points = [[r.left + r.width / 2, r.top + r.height / 2], [r.left + 2, r.top + 2], [r.right - 2, r.top + 2],
                            [r.left + 2, r.bottom - 2], [r.right - 2, r.bottom - 2]];
            const owner = a.matches('.switch input') ? a.parentElement : a;
            const seen = points.some(([x, y]) => {
                if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return false;
                const top = document.elementFromPoint(x, y);
                return top && (owner.contains(top) || top.contains(owner) || (a.labels && [...a.labels].some(l => l.contains(top))));
            });
            return [a.id || a.tagName.toLowerCase(), seen];"""
        js(driver, "window.scrollTo(0, 0); document.querySelector('.skip-link').focus()")
        first = None
        for _ in range(120):
            ActionChains(driver).send_keys(Keys.TAB).perform()
            info = js(driver, probe)
            if info is None:
                continue
            if info[0] == first:
                break
            first = first or info[0]
            if not info[1]:
                hidden.append(info[0])
        return hidden

    def target_size_and_focus_not_obscured(self):
        """WCAG 2.2 AA's new criteria that axe 3 cannot see: every target at least 24 x 24 CSS px or with room
        around it (2.5.8), and a focused control never entirely hidden (2.4.11); on the landing page and in a
        running room, at desktop and phone widths, in English and Korean."""
        room = "size-" + secrets.token_hex(3)
        d = self.run.own_driver("sizes")
        try:
            d.get(f"{self.base}/r/{room}")
            wait(d, lambda x: by_id(x, "room-input").get_attribute("value") == room, "the landing page")
            problems = []
            for width_name, (w, h) in WIDTHS:
                set_viewport(d, w, h)
                problems += [f"landing {width_name}: {p}" for p in self.small_targets(d)]
            set_viewport(d, *DESKTOP)
            join(d, self.base, f"/r/{room}", "Sam")
            by_id(d, "btn-toggle").click()
            wait(d, lambda x: body_data(x, "status") == "running", "running")
            # The room's settings and its sound and alerts, opened, so their controls are measured too.
            for panel in ("settings-details", "alerts-details"):
                if not by_id(d, panel).get_attribute("open"):
                    d.find_element(By.CSS_SELECTOR, f"#{panel} > summary").click()
            wait(d, lambda x: by_id(x, "volume-input").is_displayed() and by_id(x, "set-focus").is_displayed(),
                 "the settings and the sound panel, open")
            for lang in ("en", "ko"):
                choose_language(d, lang)
                for width_name, (w, h) in WIDTHS:
                    set_viewport(d, w, h)
                    problems += [f"room {lang} {width_name}: {p}" for p in self.small_targets(d)]
                    problems += [f"room {lang} {width_name}: focus hidden on {p}" for p in self.focus_hidden(d)]
            set_viewport(d, *DESKTOP)
            choose_language(d, "en")
            print(f"  target size and focus: {len(problems)} problems")
            assert not problems, "\n".join(problems[:20])
        finally:
            self.run.done_with(d)

    def accessibility_tree(self):
        """Chromium's accessibility tree, as a screen reader gets it, in English and Korean: every button and
        field has a name, the timer and the live region are there, and the headings say what each part is.
        Written to ax-tree-LANG.txt for reading."""
        room = "ax-" + secrets.token_hex(3)
        d = self.run.own_driver("ax")
        try:
            join(d, self.base, f"/r/{room}", "Ada")
            by_id(d, "btn-toggle").click()
            wait(d, lambda x: body_data(x, "status") == "running", "running")
            for lang, (start_or_pause, heading) in {"en": ("Pause", "People"), "ko": ("일시정지", "참여자")}.items():
                choose_language(d, lang)
                d.execute_cdp_cmd("Accessibility.enable", {})
                tree = ax_tree(d)
                with open(os.path.join(self.run.out, f"ax-tree-{lang}.txt"), "w", encoding="utf-8") as f:
                    for role, name in tree:
                        f.write(f"{role}: {name}\n")
                unnamed = [(r, n) for r, n in tree if r in ("button", "textbox", "combobox", "checkbox", "switch", "slider",
                                                             "spinbutton", "link") and not n.strip()]
                assert not unnamed, f"{lang}: controls without a name: {unnamed}"
                roles = {r for r, _ in tree}
                assert "timer" in roles, f"{lang}: no timer in the tree"
                names = [n for r, n in tree if r == "button"]
                assert any(start_or_pause in n for n in names), f"{lang}: no {start_or_pause} button: {names}"
                headings = [n for r, n in tree if r == "heading"]
                assert any(heading in n for n in headings), f"{lang}: headings {headings}"
            choose_language(d, "en")
        finally:
            self.run.done_with(d)

    def all(self):
        return [
            ("a11y: axe finds nothing on any view, language, width or scheme", self.axe_every_view),
            ("a11y: the live region says starts, pauses, the minute, the time left and phase ends, never the countdown",
             self.announcements),
            ("a11y: a task changed elsewhere and a removal are said", self.task_changed_elsewhere_and_removed),
            ("a11y: the landing says what is happening in the room before joining", self.landing_says_what_is_happening),
            ("a11y: the whole flow with the keyboard alone, dialogs keep and give back the focus", self.keyboard_alone),
            ("a11y: 200 % text (at 375 and 320 px too) and 320 px without sideways scrolling",
             self.large_text_and_narrow_screens),
            ("a11y: reduced motion, dark scheme, the phase by word and shape, the ring at 3:1", self.motion_and_schemes),
            ("a11y: the accessibility tree in English and Korean", self.accessibility_tree),
            ("a11y: targets of 24 px or with room around them, and the focus never hidden (WCAG 2.2)",
             self.target_size_and_focus_not_obscured),
        ]


def luminance(css):
    """The relative luminance of a CSS colour as Chromium computes it (rgb() or rgba())."""
    r, g, b = [int(float(x)) for x in re.findall(r"[\d.]+", css)[:3]]

    def channel(c):
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a, b):
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)
