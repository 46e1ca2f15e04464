// Package garmd is the governed tool plane's daemon: it loads a catalogue,
// verifies each caller, and takes every call through the fixed chain of
// design 7.4 to the tool service on NATS and back, recording one ledger row
// per call.
//
// This package is the daemon's assembly and nothing else: Config (one field
// per command-line flag, Validate reporting every problem at once), New (load,
// mount, connect, listen, report), Run (serve until the context ends, then
// shut down in design 7.11's order), Serve (both), and Check (would this
// catalogue mount?); and the loops that keep a running garmd current: the
// reloader of an s3:// catalogue and the quarantine sweeps. What each step
// decides lives under daemon/internal, one package per step and per port;
// cmd/garmd only turns flags and a configuration file (deploy/configfile)
// into a Config.
//
// There is no anonymous mode and no insecure switch: a caller without a
// verifiable token learns nothing, and a catalogue declaring something this
// build cannot enforce does not mount. With --catalogue-keys, a catalogue
// also serves only when the right keys signed it and its version is not
// below the highest the deployment served (signed.go, reload_signed.go,
// decisions 0135 and 0136); without it, no signature is read.
package garmd
