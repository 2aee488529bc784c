"""The browser side in a real Chromium (Debian's, headless, driven by selenium): journey sharing, shipment
tracking and the fleet console.

Starts `fleetauth serve` ($FLEETAUTH_BIN) on free ports with 60-second Fleet Engine tokens, creates a rider granted one
trip and one granted nothing through the admin API, and plays the dispatcher and the driver itself over REST (a
vehicle moving toward the pickup, then the drop-off, the trip's status advancing). Every assertion reads what the
browser rendered — text on the page, the on-screen position of the vehicle marker — never the page's source.
Screenshots go to $FLEETAUTH_SCREENSHOTS (default: Tests/Browser/screenshots), which CI keeps.
"""
import json
import os
import sys
import re
import socket
import subprocess
import tempfile
import time
import urllib.request

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("FLEETAUTH_BIN", os.path.join(ROOT, ".build", "debug", "fleetauth"))
SHOTS = os.environ.get("FLEETAUTH_SCREENSHOTS", os.path.join(os.path.dirname(os.path.abspath(__file__)), "screenshots"))
PROJECT = "demo-project"
PASSWORD = "rider password 1"
PICKUP = (37.4220, -122.0841)
DROPOFF = (37.4300, -122.0700)
START = (37.4100, -122.1000)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(method, url, token=None, body=None):
    request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read()
            return answer.status, json.loads(text) if text else {}
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


class Stack:
    def __init__(self, directory):
        ports = [free_port() for _ in range(3)]
        self.log = os.path.join(directory, "serve.log")
        self.process = subprocess.Popen(
            [BIN, "serve", "--data", os.path.join(directory, "data"), "--token-server-port", str(ports[0]),
             "--emulator-port", str(ports[1]), "--emulator-grpc-port", str(ports[2]), "--token-lifetime", "60"],
            stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        def ready():
            text = open(self.log).read()
            assert self.process.poll() is None, text
            return text if "Press Ctrl-C" in text else None
        text = wait_until(ready, "fleetauth serve printing that both servers are up")
        self.token_server = re.search(r"Token server:\s+(\S+)", text).group(1)
        self.emulator = re.search(r"Fleet Engine emulator:\s+(\S+)", text).group(1)
        self.console_url = re.search(r"Fleet console \(operators\):\s+(\S+)", text).group(1)
        operator_password = re.search(r'"operator" with password (\S+)', text).group(1)
        self.operator = self.login("operator", operator_password)
        for name, grants in [("rita", [{"kind": "trip", "id": "trip-1"}]), ("ursula", [])]:
            status, body = call("POST", f"{self.token_server}/v1/admin/users", self.operator,
                                {"username": name, "role": "consumer", "password": PASSWORD})
            assert status == 201, body
            for grant in grants:
                assert call("POST", f"{self.token_server}/v1/admin/users/{name}/grants", self.operator, grant)[0] == 201
        self.base = f"{self.emulator}/v1/providers/{PROJECT}"
        status, body = call("POST", f"{self.base}/vehicles?vehicleId=v1", self.server_token, {
            "vehicleState": "ONLINE", "supportedTripTypes": ["EXCLUSIVE"], "maximumCapacity": 4,
            "vehicleType": {"category": "AUTO"}, "lastLocation": {"location": point(START)}})
        assert status == 200, body
        status, body = call("POST", f"{self.base}/trips?tripId=trip-1", self.server_token, {
            "vehicleId": "v1", "tripType": "EXCLUSIVE", "pickupPoint": {"point": point(PICKUP)},
            "dropoffPoint": {"point": point(DROPOFF)}})
        assert status == 200, body

    @property
    def server_token(self):
        """A fresh server token (they live 60 s here), as a dispatcher backend would fetch one."""
        status, body = call("GET", f"{self.token_server}/token/server", self.operator)
        assert status == 200, body
        return body["token"]

    def login(self, username, password):
        status, body = call("POST", f"{self.token_server}/v1/sessions", None,
                            {"username": username, "password": password})
        assert status == 201, body
        return body["sessionToken"]

    def drive(self, position):
        status, body = call("PUT", f"{self.base}/vehicles/v1?updateMask=lastLocation", self.server_token,
                            {"lastLocation": {"location": point(position)}})
        assert status == 200, body

    def trip_status(self, status):
        answer, body = call("PUT", f"{self.base}/trips/trip-1?updateMask=tripStatus", self.server_token,
                            {"tripStatus": status})
        assert answer == 200, body

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def point(position):
    return {"latitude": position[0], "longitude": position[1]}


@pytest.fixture(scope="module")
def stack():
    with tempfile.TemporaryDirectory() as directory:
        instance = Stack(directory)
        try:
            yield instance
        finally:
            instance.stop()


@pytest.fixture
def browser():
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                     "--disable-gpu"]:
        options.add_argument(argument)
    binary = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
    if os.path.exists(binary):
        options.binary_location = binary
    driver_path = os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver")
    service = Service(driver_path) if os.path.exists(driver_path) else Service()
    driver = webdriver.Chrome(options=options, service=service)
    os.makedirs(SHOTS, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


def text(browser, element_id):
    return browser.find_element(By.ID, element_id).text


def table_rows(browser, table_id):
    """The rendered text of each cell of a table's body rows, read in one step: the console redraws its tables
    on every refresh, so elements found one call earlier may already be gone."""
    return browser.execute_script(
        "return [...document.querySelectorAll(`#${arguments[0]} tbody tr`)]"
        ".map(row => [...row.cells].map(cell => cell.innerText.trim()))", table_id)


def wait(browser, condition, timeout=20, message=""):
    try:
        return WebDriverWait(browser, timeout, poll_frequency=0.2,
                             ignored_exceptions=[StaleElementReferenceException]).until(
            lambda _: condition(), message)
    except Exception:
        # What the page said, for the failure report.
        print("page message:", browser.find_element(By.ID, "message").text)
        raise


def sign_in(browser, username, password=PASSWORD):
    wait(browser, lambda: any(f.is_displayed() for f in browser.find_elements(By.ID, "sign-in")),
         message="the sign-in form is shown")
    form = browser.find_element(By.ID, "sign-in")
    for name, value in [("username", username), ("password", password)]:
        field = form.find_element(By.NAME, name)
        field.clear()
        field.send_keys(value)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()


def marker_center(browser):
    """Where the vehicle marker is drawn on screen, read in one step (the map is redrawn on every poll)."""
    return tuple(browser.execute_script(
        "const r = document.getElementById('vehicle-marker').getBoundingClientRect();"
        "return [r.x + r.width / 2, r.y + r.height / 2]"))


def test_journey_sharing_follows_the_trip_and_refreshes_its_token(stack, browser):
    browser.get(f"{stack.token_server}/app/trip/trip-1")
    sign_in(browser, "rita")
    wait(browser, lambda: text(browser, "trip-status") == "Looking for a driver", message="the trip is shown")
    assert text(browser, "trip-vehicle") == "v1"
    wait(browser, lambda: browser.find_element(By.ID, "vehicle-marker").is_displayed())
    browser.save_screenshot(os.path.join(SHOTS, "trip-new.png"))
    opened = text(browser, "page-opened")

    # The driver heads for the pickup: the status changes and the vehicle marker moves on screen.
    stack.trip_status("ENROUTE_TO_PICKUP")
    before = marker_center(browser)
    stack.drive((37.4160, -122.0920))
    wait(browser, lambda: text(browser, "trip-status") == "Driver on the way", message="status follows")
    wait(browser, lambda: marker_center(browser) != before, message="the vehicle marker moves")
    assert text(browser, "trip-remaining") not in ("", "—")
    assert text(browser, "trip-eta").startswith("in ") or text(browser, "trip-eta") == "now"
    browser.save_screenshot(os.path.join(SHOTS, "trip-enroute.png"))

    # 60-second tokens: a new one is fetched before the first expires, without reloading the page.
    assert text(browser, "token-fetches") == "1"
    wait(browser, lambda: int(text(browser, "token-fetches")) >= 2, timeout=75, message="the token is refreshed")
    assert text(browser, "page-opened") == opened

    stack.trip_status("ARRIVED_AT_PICKUP")
    stack.drive(PICKUP)
    stack.trip_status("ENROUTE_TO_DROPOFF")
    moved = marker_center(browser)
    stack.drive((37.4270, -122.0760))
    wait(browser, lambda: text(browser, "trip-status") == "On the way to your destination")
    wait(browser, lambda: marker_center(browser) != moved)
    stack.drive(DROPOFF)
    stack.trip_status("COMPLETE")
    wait(browser, lambda: text(browser, "trip-status") == "Trip complete")
    browser.save_screenshot(os.path.join(SHOTS, "trip-complete.png"))


def test_an_ungranted_trip_and_an_ended_session_are_clear_messages(stack, browser):
    browser.get(f"{stack.token_server}/app/trip/trip-1")
    sign_in(browser, "ursula")
    wait(browser, lambda: "not shared with ursula" in text(browser, "message"), message="ungranted trip explained")
    assert not browser.find_element(By.ID, "map-panel").is_displayed()
    browser.save_screenshot(os.path.join(SHOTS, "trip-ungranted.png"))
    # Ending the session on the server (another tab's logout) shows the sign-in again with a message.
    browser.get(f"{stack.token_server}/app/trip/trip-1")
    browser.execute_script("sessionStorage.clear()")
    browser.refresh()
    sign_in(browser, "rita")
    wait(browser, lambda: text(browser, "trip-vehicle") == "v1")
    session = browser.execute_script("return JSON.parse(sessionStorage.getItem('fleetauth.session')).token")
    assert call("DELETE", f"{stack.token_server}/v1/sessions/current", session)[0] == 204
    # The page keeps its valid trip token until it needs a new one; force that by a reload with the dead session.
    browser.refresh()
    wait(browser, lambda: "session has expired" in text(browser, "message").lower()
         or browser.find_element(By.ID, "sign-in-panel").is_displayed(), message="an ended session is explained")


def test_the_console_lists_every_vehicle_tokens_and_rejections(stack, browser):
    # A second vehicle, and a forged token refused by Fleet Engine, so both show up.
    status, _ = call("POST", f"{stack.base}/vehicles?vehicleId=v2", stack.server_token, {
        "vehicleState": "OFFLINE", "supportedTripTypes": ["EXCLUSIVE"], "maximumCapacity": 4,
        "vehicleType": {"category": "AUTO"}, "lastLocation": {"location": point((37.40, -122.08))}})
    assert status == 200
    forged = stack.server_token
    assert call("GET", f"{stack.base}/vehicles/v1", forged[:-4] + "AAAA")[0] == 401
    # A trip token for rita, to be listed among the tokens issued.
    assert call("GET", f"{stack.token_server}/token/consumer/trip-1", stack.login("rita", PASSWORD))[0] == 200
    browser.get(stack.console_url)
    sign_in(browser, "rita")
    wait(browser, lambda: "for operators" in browser.find_element(By.CSS_SELECTOR, "#sign-in .form-error").text)
    operator_password = re.search(r'"operator" with password (\S+)', open(stack.log).read()).group(1)
    sign_in(browser, "operator", operator_password)
    wait(browser, lambda: text(browser, "vehicle-count") == "2", message="both vehicles listed")
    rows = table_rows(browser, "vehicles")
    assert sorted(row[0] for row in rows) == ["v1", "v2"]
    assert {row[0]: row[1] for row in rows} == {"v1": "ONLINE", "v2": "OFFLINE"}
    for vehicle in ["v1", "v2"]:  # map markers, redrawn on every refresh
        wait(browser, lambda: browser.find_element(By.ID, f"vehicle-{vehicle}").is_displayed(),
             message=f"{vehicle} is on the map")
    wait(browser, lambda: any(row[0] == "invalid_signature" for row in table_rows(browser, "rejections")),
         message="the forged token is counted")
    # The Requests panel: the forged call listed with its code, opened to its decision, then the filters.
    wait(browser, lambda: any(row[1] == "UNAUTHENTICATED" and row[2].startswith("GetVehicle")
                              for row in table_rows(browser, "requests")),
         message="the refused call is listed in Requests")
    browser.execute_script(
        "document.querySelector('#requests tbody tr[data-code=\"UNAUTHENTICATED\"]').click()")
    wait(browser, lambda: "invalid_signature" in text(browser, "request-detail"),
         message="the refused call opens to its decision")
    assert "fleetauthDecision" not in text(browser, "request-detail")  # shown as "decision", the request beside it
    browser.find_element(By.ID, "filter-vehicle").send_keys("v2")
    def only_v2():
        rows = table_rows(browser, "requests")
        return rows and all("vehicle_id=v2" in row[3] for row in rows)
    wait(browser, only_v2, message="the vehicle filter keeps only v2's calls")
    browser.find_element(By.ID, "filter-vehicle").clear()
    def tokens():
        return [" ".join(row) for row in table_rows(browser, "tokens")]
    wait(browser, lambda: any("rita" in row and "consumer" in row and "trip-1" in row for row in tokens()),
         message="rita's trip token is listed")
    wait(browser, lambda: any("operator" in row and "fleet_reader" in row for row in tokens()),
         message="the console's own fleet-reader token is listed")
    # Never a token on the page.
    assert forged.split(".")[2][:40] not in browser.find_element(By.TAG_NAME, "body").text
    browser.set_window_size(1280, 1100)
    browser.save_screenshot(os.path.join(SHOTS, "console.png"))


def test_shipment_tracking_follows_the_parcel_to_delivered(stack, browser):
    """The recipient's page for a tracking ID: the van, the stops before the parcel's, then Delivered. A dispatcher
    plans the route with an operator's delivery server token, as a delivery backend does."""
    status, body = call("GET", f"{stack.token_server}/token/delivery_server", stack.operator)
    assert status == 200, body
    dispatcher = body["token"]
    status, body = call("POST", f"{stack.token_server}/v1/admin/users", stack.operator,
                        {"username": "cleo", "role": "consumer", "password": PASSWORD})
    assert status == 201, body
    assert call("POST", f"{stack.token_server}/v1/admin/users/cleo/grants", stack.operator,
                {"kind": "tracking", "id": "parcel-1"})[0] == 201
    base = stack.base
    assert call("POST", f"{base}/deliveryVehicles?deliveryVehicleId=van-1", dispatcher,
                {"lastLocation": {"location": point(START)}})[0] == 200
    for task, tracking, place in [("task-0", "parcel-0", PICKUP), ("task-1", "parcel-1", DROPOFF)]:
        status, body = call("POST", f"{base}/tasks?taskId={task}", dispatcher, {
            "type": "DELIVERY", "state": "OPEN", "trackingId": tracking, "taskDuration": "120s",
            "plannedLocation": {"point": point(place)}})
        assert status == 200, body

    def route(*stops):
        status, body = call("PATCH", f"{base}/deliveryVehicles/van-1?updateMask=remainingVehicleJourneySegments",
                            dispatcher, {"remainingVehicleJourneySegments": [
                                {"stop": {"plannedLocation": {"point": point(place)}, "tasks": [{"taskId": task}],
                                          "state": "NEW"}} for task, place in stops]})
        assert status == 200, body

    def move(position):
        assert call("PATCH", f"{base}/deliveryVehicles/van-1?updateMask=lastLocation", dispatcher,
                    {"lastLocation": {"location": point(position)}})[0] == 200

    route(("task-0", PICKUP), ("task-1", DROPOFF))
    browser.get(f"{stack.token_server}/app/shipment/parcel-1")
    sign_in(browser, "cleo")
    wait(browser, lambda: text(browser, "shipment-status") == "On its way", message="the parcel is shown")
    assert text(browser, "shipment-stops") == "1"
    assert text(browser, "shipment-remaining") not in ("", "—")
    assert text(browser, "shipment-eta").startswith("in ") or text(browser, "shipment-eta") == "now"
    wait(browser, lambda: browser.find_element(By.ID, "vehicle-marker").is_displayed())
    browser.save_screenshot(os.path.join(SHOTS, "shipment-on-its-way.png"))

    # The van drives to the first stop and completes it: the marker moves and no stop is left before the parcel's.
    before = marker_center(browser)
    move(PICKUP)
    wait(browser, lambda: marker_center(browser) != before, message="the van marker moves")
    route(("task-1", DROPOFF))
    wait(browser, lambda: text(browser, "shipment-stops") == "0", message="the first stop is done")

    # Delivered: the stop leaves the route (closing the task), then the outcome is recorded.
    move(DROPOFF)
    route()
    assert call("PATCH", f"{base}/tasks/task-1?updateMask=taskOutcome", dispatcher,
                {"taskOutcome": "SUCCEEDED"})[0] == 200
    wait(browser, lambda: text(browser, "shipment-status") == "Delivered", message="the parcel is delivered")
    browser.save_screenshot(os.path.join(SHOTS, "shipment-delivered.png"))

    # Someone not granted the tracking ID is told so, and sees no map.
    browser.execute_script("sessionStorage.clear()")
    browser.refresh()
    sign_in(browser, "ursula")
    wait(browser, lambda: "not shared with ursula" in text(browser, "message"), message="ungranted parcel explained")
    assert not browser.find_element(By.ID, "map-panel").is_displayed()

    # The operators' console lists the delivery vehicle and the open tasks (one never put on a route).
    status, body = call("POST", f"{base}/tasks?taskId=task-2", dispatcher, {
        "type": "PICKUP", "state": "OPEN", "trackingId": "parcel-2", "taskDuration": "60s",
        "plannedLocation": {"point": point(START)}})
    assert status == 200, body
    browser.execute_script("sessionStorage.clear()")
    browser.get(stack.console_url)
    operator_password = re.search(r'"operator" with password (\S+)', open(stack.log).read()).group(1)
    sign_in(browser, "operator", operator_password)
    wait(browser, lambda: text(browser, "delivery-vehicle-count") == "1", message="the delivery vehicle is listed")
    assert [row[0] for row in table_rows(browser, "delivery-vehicles")] == ["van-1"]
    wait(browser, lambda: [row[:3] for row in table_rows(browser, "tasks")] == [["task-2", "PICKUP", "parcel-2"]],
         message="the open task is listed")
    wait(browser, lambda: browser.find_element(By.ID, "delivery-vehicle-van-1").is_displayed(),
         message="the van is on the map")
