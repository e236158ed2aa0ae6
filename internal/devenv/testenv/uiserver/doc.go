// Package uiserver runs weir's UI server (internal/ui/server) for one test
// or benchmark: listening on a free port of 127.0.0.1, serving until the
// test ends, its end checked. The server's own tests, the browser tests
// and bench/ui start it the same way through Start.
//
//	r := uiserver.Start(t, server.Options{Mode: server.Local, Config: env.Config, Assets: web.FS()})
//	http.Get(r.Base + "/api/whoami")
package uiserver
