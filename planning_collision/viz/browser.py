"""Screenshots of a page in a headless Chromium, the system's own (Debian: ``apt-get install
chromium``), driven by Playwright (``pip install playwright``; its own browser download is
never used).

::

    from planning_collision.viz.browser import screenshot

    image = screenshot(viewer.url, "view.png", ready=lambda img: ...)  # (H, W, 3) uint8

WebGL runs on SwiftShader (Chromium's CPU renderer), so it works without a GPU or a
display; as root Chromium needs ``--no-sandbox``. The page gets a fresh, empty profile
and no network besides the page's own host.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

__all__ = ["CHROMIUM_ARGS", "find_chromium", "open_page", "screenshot"]

# As root, and headless without a GPU: no sandbox, SwiftShader for WebGL, nothing that
# reaches for the network or a profile (QUIC, background services, component updates).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-unsafe-swiftshader",
    "--use-angle=swiftshader",
]
_CLOSE_NOTIFICATIONS = """
document.querySelectorAll(".mantine-Notification-closeButton").forEach((b) => b.click());
"""
_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """Path of a system Chromium (``$CHROMIUM`` first, then the usual names), or None."""
    env = os.environ.get("CHROMIUM")
    if env:
        return env if os.path.isfile(env) else shutil.which(env)
    for name in _CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _import_playwright():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        raise ImportError(
            "screenshots need Playwright (it drives the system Chromium): pip install playwright"
        ) from e
    return sync_playwright


def _decode(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


@contextlib.contextmanager
def open_page(
    url: str, *, width: int = 1280, height: int = 800, timeout: float = 60.0, chromium=None
):
    """A headless Chromium showing `url` (a Playwright ``Page``), closed on exit. Returns
    once the page has a ``canvas`` element."""
    sync_playwright = _import_playwright()
    exe = chromium or find_chromium()
    if exe is None:
        raise FileNotFoundError(
            "no Chromium found (looked for $CHROMIUM and " + ", ".join(_CANDIDATES) + "); "
            "on Debian: apt-get install chromium"
        )
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(url, timeout=timeout * 1000)
            page.wait_for_selector("canvas", timeout=timeout * 1000)
            yield page
        finally:
            browser.close()


def screenshot(
    url: str,
    file=None,
    *,
    width: int = 1280,
    height: int = 800,
    ready: Callable[[np.ndarray], bool] | None = None,
    timeout: float = 60.0,
    settle: float = 1.0,
    chromium: str | None = None,
    close_notifications: bool = True,
) -> npt.NDArray[np.uint8]:
    """Load `url` in a headless Chromium and return a screenshot, ``(height, width, 3)
    uint8`` RGB; also written to `file` (PNG) when given.

    Waits for a ``canvas`` element, then takes screenshots every 0.25 s until
    ``ready(image)`` is true (no `ready`: until two in a row are the same, the page has
    stopped changing) and at least `settle` seconds have passed since the canvas appeared;
    after `timeout` seconds the last screenshot is returned as it is (the caller judges
    it). `close_notifications` clicks away pop-up notices (viser's "software WebGL"
    warning) before the screenshot.
    """
    end = time.monotonic() + timeout
    with open_page(url, width=width, height=height, timeout=timeout, chromium=chromium) as page:
        start = time.monotonic()
        last = None
        while True:
            if close_notifications:
                page.evaluate(_CLOSE_NOTIFICATIONS)
            image = _decode(page.screenshot())
            if ready is not None:
                done = ready(image)
            else:
                done = last is not None and np.array_equal(image, last)
            if (done and time.monotonic() - start >= settle) or time.monotonic() > end:
                break
            last = image
            time.sleep(0.25)
    if file is not None:
        from PIL import Image

        Image.fromarray(image).save(file, optimize=True)
    return image
