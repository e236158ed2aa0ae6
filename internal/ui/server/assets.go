package server

import (
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// assets serves the browser files; a path that names no file gets
// index.html, so that deep links (/graph, /objects/…) load the app.
func (s *Server) assets(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not served outside /api/")
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	if info, err := fs.Stat(s.opts.Assets, name); err != nil || info.IsDir() {
		name = "index.html"
	}
	if name == "index.html" {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeFileFS(w, r, s.opts.Assets, name)
}
