"""Open a replay page in headless Chromium and step through it like a player would.

    scripts/browser-check REPLAY.html     (a page `pbem replay ... --html` wrote)

Prints what the page shows after each action and exits non-zero if stepping fails. Needs
Debian's chromium and chromium-driver (installed here when run as root) and selenium
(installed into .venv when missing), set up after the arguments are read: `--help` and a
wrong argument install nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1200,1000")


def set_up() -> str | None:
    """Install what the check needs and is missing; why it cannot run, if so."""
    if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
        if os.geteuid() != 0:
            return "install Debian's chromium and chromium-driver first"
        # (a fresh machine's package lists may be empty or old: updated first)
        apt = [["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"]]
        if any(subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode for cmd in apt):
            return "apt-get could not install chromium and chromium-driver"
    if importlib.util.find_spec("selenium") is None:
        if subprocess.run([sys.executable, "-m", "pip", "install", "-q", "selenium"]).returncode:
            return "pip could not install selenium"
    return None


def step_through(page: Path) -> int:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    options = Options()
    for flag in FLAGS:
        options.add_argument(flag)
    options.binary_location = str(CHROMIUM)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    failures = []
    try:
        driver.get(page.resolve().as_uri())
        text = lambda el: driver.find_element(By.ID, el).text  # noqa: E731
        cards = lambda: len(driver.find_elements(By.CSS_SELECTOR, "#maze use"))  # noqa: E731
        print(f"opened: {text('counter')}; {cards()} cards on the maze")
        start = cards()
        for _ in range(5):
            ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
        print(f"5 x Right: {text('counter')}; {text('move').splitlines()[0]}")
        if "5 /" not in text("counter"):
            failures.append("arrow keys do not step")
        ActionChains(driver).send_keys(Keys.END).perform()
        print(f"End: {text('counter')}; {cards()} cards on the maze")
        if cards() <= start:
            failures.append("the maze does not change")
        driver.find_element(By.ID, "first").click()
        who = Select(driver.find_element(By.ID, "who"))
        who.select_by_index(1)
        driver.find_element(By.ID, "next").click()
        shown = text("players")
        print(f"{who.first_selected_option.text}, move 1: {shown.count('?')} hidden values in the players table")
        if "?" not in shown:
            failures.append("a seat's perspective shows every hand")
        # a phone: 390 px wide, the page opened at a move's own link (#r1-m5)
        driver.set_window_size(390, 844)
        link = f"#r{driver.execute_script('return D.round')}-m5"
        driver.get(page.resolve().as_uri() + link)
        driver.refresh()  # opened afresh at the link, not only a jump within the page
        shown, box = driver.execute_script(
            "return [document.querySelector('#maze svg').getBoundingClientRect().width, $('maze').clientWidth]")
        print(f"390 px at {link}: {text('counter')}; maze {shown:.0f} px in a box of {box} px")
        if "5 /" not in text("counter"):
            failures.append(f"the page does not open at {link}")
        if shown > box:
            failures.append("the maze is wider than a phone's page (cut, or scrolled sideways)")
        ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
        if not driver.current_url.endswith(link.replace("-m5", "-m6")):
            failures.append(f"stepping does not follow the address: {driver.current_url}")
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        if errors:
            failures.append(f"console errors: {errors}")
    finally:
        driver.quit()
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


def main() -> int:
    ap = argparse.ArgumentParser(prog="scripts/browser-check", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("page", metavar="REPLAY.html", type=Path, help="the replay page to step through")
    page = ap.parse_args().page
    if not page.is_file():
        ap.error(f"{page} is not a file")
    why = set_up()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 1
    return step_through(page)


if __name__ == "__main__":
    sys.exit(main())
