"""The fleet view (`cockpit attach` with no run): `watch` keeps one host's pushed rows (or why
it has none), `board` turns every host's rows into runs and the `needs you` inbox, and
`fleet_app` draws them (`FleetApp`, the only Textual module of `cockpit.host`). This face
imports nothing, so the host process never loads Textual."""
