package app

import (
	"net/http"
	"net/http/pprof"
)

// profileHandlers are Go's runtime profiles, served on the metrics server
// under /debug/pprof/ as Flux's controllers serve them (Flux's "Advanced
// debugging" guide: `curl http://localhost:8080/debug/pprof/heap`).
// They cost nothing until asked; the metrics address is the Pod's own
// (`--metrics-addr`), never a Service Flux's manifests expose.
func profileHandlers() map[string]http.Handler {
	const prefix = "/debug/pprof"
	h := map[string]http.Handler{
		prefix + "/":        http.HandlerFunc(pprof.Index),
		prefix + "/cmdline": http.HandlerFunc(pprof.Cmdline),
		prefix + "/profile": http.HandlerFunc(pprof.Profile),
		prefix + "/symbol":  http.HandlerFunc(pprof.Symbol),
		prefix + "/trace":   http.HandlerFunc(pprof.Trace),
	}
	for _, name := range []string{"heap", "allocs", "goroutine", "threadcreate", "block", "mutex"} {
		h[prefix+"/"+name] = pprof.Handler(name)
	}
	return h
}
