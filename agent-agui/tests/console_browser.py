"""Drives the eugene console in headless Chromium (Selenium) for agent-agui/tests/console.rs.

Usage: console_browser.py BASE_URL TOKEN SCREENSHOT_DIR SCENARIO THREAD

Each scenario does what a person would in the page and prints a JSON report on stdout: what the
page showed. The Rust test checks it, and what happened on the server (the skill's counter, the
thread's state). Exit 3: Chromium could not start (the message says how to install it).
"""

import json
import os
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE, TOKEN, SHOTS, SCENARIO, THREAD = sys.argv[1:6]
PATIENCE = 60


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 "--disable-gpu", "--window-size=1280,900", "--no-first-run"):
        options.add_argument(flag)
    service = Service(os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver"))
    try:
        return webdriver.Chrome(service=service, options=options)
    except Exception as error:  # noqa: BLE001 - any failure to start is reported the same way
        sys.stderr.write(
            f"headless Chromium could not start ({error}). Install it: apt-get update && "
            "apt-get install -y chromium chromium-driver (or set CHROMIUM_BIN and "
            "CHROMEDRIVER_BIN)\n")
        sys.exit(3)


def wait(driver, test, what):
    try:
        return WebDriverWait(driver, PATIENCE).until(lambda d: test(d))
    except Exception:
        shot(driver, f"{SCENARIO}-timeout")
        raise AssertionError(f"waited for {what}; the page showed: {text(driver, 'finish')!r}, "
                             f"status {text(driver, 'status')!r}")


def text(driver, id_):
    return driver.find_element(By.ID, id_).text


def shot(driver, name):
    os.makedirs(SHOTS, exist_ok=True)
    driver.save_screenshot(os.path.join(SHOTS, f"{name}.png"))


def idle(driver):
    return driver.find_element(By.TAG_NAME, "body").get_attribute("data-busy") == "0"


def open_console(driver, with_token=True):
    driver.get(f"{BASE}/console" + (f"#token={TOKEN}" if with_token else ""))
    wait(driver, lambda d: text(d, "status") != "", "the first listing")


def start_run(driver, goal):
    driver.find_element(By.ID, "thread").clear()
    driver.find_element(By.ID, "thread").send_keys(THREAD)
    driver.find_element(By.ID, "goal").send_keys(goal)
    driver.find_element(By.ID, "start").click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#pending .call"), "a pending call")
    wait(driver, idle, "the run to end")


def pending(driver):
    calls = []
    for card in driver.find_elements(By.CSS_SELECTOR, "#pending .call"):
        calls.append({
            "interruptId": card.get_attribute("data-interrupt"),
            "path": card.find_element(By.CLASS_NAME, "path").text,
            "reason": card.find_element(By.CLASS_NAME, "reason").text,
            "arguments": json.loads(card.find_element(By.CLASS_NAME, "arguments").text),
        })
    return calls


def events(driver):
    return [{"kind": li.get_attribute("class"), "depth": int(li.get_attribute("data-depth")),
             "text": li.text} for li in driver.find_elements(By.CSS_SELECTOR, "#events li")]


def trace(driver):
    return [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#trace li")]


def traces(driver):
    return int(driver.find_element(By.TAG_NAME, "body").get_attribute("data-traces") or 0)


def listings(driver):
    return int(driver.find_element(By.TAG_NAME, "body").get_attribute("data-listings") or 0)


def refresh(driver):
    """Clicks Refresh and waits for the new listing to be shown."""
    before = listings(driver)
    driver.find_element(By.ID, "refresh").click()
    wait(driver, lambda d: listings(d) > before, "the new listing")


def click(driver, selector):
    driver.find_element(By.CSS_SELECTOR, f"#pending .call {selector}").click()


def finished(driver):
    wait(driver, lambda d: idle(d) and text(d, "finish").startswith(("finished: s", "refused")),
         "the run to finish")
    return text(driver, "finish")


def page_state(driver):
    return {"pending": pending(driver), "finish": text(driver, "finish"),
            "usage": text(driver, "usage"), "events": events(driver),
            "agents": [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#agents li")],
            "status": text(driver, "status"),
            "url": driver.current_url,
            "stored": driver.execute_script("return Object.keys(sessionStorage)")}


def decide(driver, button):
    start_run(driver, "Clean up the old branch.")
    report = {"paused": page_state(driver)}
    shot(driver, f"{SCENARIO}-paused")
    click(driver, button)
    finished(driver)
    shot(driver, f"{SCENARIO}-finished")
    report["after"] = page_state(driver)
    return report


def edit(driver):
    start_run(driver, "Clean up the old branch.")
    report = {"paused": page_state(driver), "refusals": []}
    click(driver, ".edit")
    area = driver.find_element(By.CSS_SELECTOR, "#pending .call .edited")
    for attempt in ("not json", '{"name": 5}', "{}", "[1]"):
        area.clear()
        area.send_keys(attempt)
        click(driver, ".send-edit")
        error = driver.find_element(By.CSS_SELECTOR, "#pending .call .edit-error").text
        report["refusals"].append({"sent": attempt, "error": error, "busy": not idle(driver)})
    shot(driver, f"{SCENARIO}-refused")
    refresh(driver)
    report["still"] = page_state(driver)
    if os.environ.get("CONSOLE_EDIT_VALID"):
        report["after"] = send_edit(driver, '{"name": "stale"}')
    return report


def send_edit(driver, edit):
    """Edits the call to `edit`, sends it, waits for the run to finish: the page then."""
    click(driver, ".edit")
    area = driver.find_element(By.CSS_SELECTOR, "#pending .call .edited")
    area.clear()
    area.send_keys(edit)
    click(driver, ".send-edit")
    finished(driver)
    shot(driver, f"{SCENARIO}-sent")
    return page_state(driver)


# Edits of the paused call (`{"name": "old"}`) that its schema refuses deeper down than the
# first level: a value not in the enum, a required field missing in a struct reached by $ref, a
# list item of the wrong type, a u32 below its minimum. The valid one sets every part of it.
SCHEMA_REFUSED = (
    '{"name": "old", "mode": "gentle"}',
    '{"name": "old", "sign_off": {"by": "ann", "after": {}}}',
    '{"name": "old", "keep": [{"branch": "main", "days": 7}, {"branch": "dev", "days": "soon"}]}',
    '{"name": "old", "keep": [{"branch": "main", "days": -1}]}',
)
SCHEMA_VALID = ('{"name": "stale", "mode": "hard", "sign_off": {"by": "ann", "after": {"by": "bob"}}, '
                '"keep": [{"branch": "main", "days": 7}]}')


def edit_schema(driver):
    start_run(driver, "Clean up the old branch.")
    report = {"paused": page_state(driver), "refusals": []}
    click(driver, ".edit")
    area = driver.find_element(By.CSS_SELECTOR, "#pending .call .edited")
    for attempt in SCHEMA_REFUSED:
        area.clear()
        area.send_keys(attempt)
        click(driver, ".send-edit")
        # The page writes its refusal as the click is handled; no error there means it sent
        # (and the card may be gone or drawn again already: read it in one step).
        error = driver.execute_script(
            "const e = document.querySelector('#pending .call .edit-error');"
            "return e ? e.textContent : '';")
        if not error:
            shot(driver, f"{SCENARIO}-not-refused")
            raise AssertionError(f"the page did not refuse {attempt}: no error shown, "
                                 f"busy {not idle(driver)}, {text(driver, 'finish')!r}")
        report["refusals"].append({"sent": attempt, "error": error, "busy": not idle(driver)})
        shot(driver, f"{SCENARIO}-refused-{len(report['refusals'])}")
    refresh(driver)
    report["still"] = page_state(driver)
    if os.environ.get("CONSOLE_EDIT_VALID"):
        report["after"] = send_edit(driver, SCHEMA_VALID)
    return report


def two_tabs(driver):
    start_run(driver, "Clean up the old branch.")
    first = driver.current_window_handle
    driver.switch_to.new_window("tab")
    second = driver.current_window_handle
    open_console(driver)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'#threads li[data-thread="{THREAD}"]'),
         "the thread in the list")
    driver.find_element(By.CSS_SELECTOR, f'#threads li[data-thread="{THREAD}"]').click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#pending .call"), "the pending call")
    report = {"second_saw": pending(driver)}
    driver.switch_to.window(first)
    click(driver, ".approve")
    report["first"] = finished(driver)
    shot(driver, f"{SCENARIO}-first")
    driver.switch_to.window(second)
    # The second tab decides otherwise on the call it was shown: refused, the call already
    # decided. (The same decision sent again gets the first one's outcome: tests/interrupts.rs.)
    click(driver, ".deny")
    report["second"] = finished(driver)
    shot(driver, f"{SCENARIO}-second")
    report["second_after"] = page_state(driver)
    return report


def isolation(driver):
    start_run(driver, "Clean up the old branch.")
    report = {"first": page_state(driver)}
    other = THREAD + "-other"
    driver.find_element(By.ID, "thread").clear()
    driver.find_element(By.ID, "thread").send_keys(other)
    driver.find_element(By.ID, "goal").clear()
    driver.find_element(By.ID, "goal").send_keys("Say hello.")
    driver.find_element(By.ID, "start").click()
    wait(driver, lambda d: idle(d) and text(d, "finish").startswith("finished: s"), "the other run")
    report["other"] = page_state(driver)
    shot(driver, f"{SCENARIO}-other")
    before = traces(driver)
    driver.find_element(By.CSS_SELECTOR, f'#threads li[data-thread="{THREAD}"]').click()
    wait(driver, lambda d: traces(d) > before, "the thread's trace")
    report["back"] = page_state(driver) | {"trace": trace(driver)}
    return report


def no_token(driver):
    open_console(driver, with_token=False)
    wait(driver, lambda d: "401" in text(d, "status"), "the 401")
    shot(driver, SCENARIO)
    return page_state(driver) | {"threads": len(driver.find_elements(By.CSS_SELECTOR, "#threads li"))}


def main():
    driver = browser()
    try:
        if SCENARIO == "no-token":
            report = no_token(driver)
        else:
            open_console(driver)
            report = {
                "approve": lambda: decide(driver, ".approve"),
                "deny": lambda: decide(driver, ".deny"),
                "edit": lambda: edit(driver),
                "edit-schema": lambda: edit_schema(driver),
                "two-tabs": lambda: two_tabs(driver),
                "isolation": lambda: isolation(driver),
            }[SCENARIO]()
        print(json.dumps(report))
    finally:
        driver.quit()


main()
