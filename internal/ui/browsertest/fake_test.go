package browsertest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"time"

	"github.com/chromedp/chromedp"

	"github.com/weir-gitops/weir/internal/ui/web"
)

type fakeServer struct {
	mu      sync.Mutex
	objects []map[string]any
	subs    []chan string
}

func sum(kind, ns, name, state, reason, msg string) map[string]any {
	return map[string]any{"kind": kind, "namespace": ns, "name": name, "state": state, "reason": reason, "message": msg,
		"revision": "main@sha1:2c83ed64161993761f84ced0b182cfaed4edd56b", "suspended": state == "suspended",
		"suspendedBy": map[bool]string{true: "alice"}[state == "suspended"], "suspendReason": map[bool]string{true: "maintenance window"}[state == "suspended"],
		"lastTransition": "2026-12-01T20:00:00Z"}
}

func startFake(t *testing.T) string {
	f := &fakeServer{objects: []map[string]any{
		sum("Kustomization", "flux-system", "apps", "failing", "BuildFailed", "kustomize build failed: accumulating resources: missing.yaml: no such file"),
		sum("Kustomization", "flux-system", "flux-system", "ready", "ReconciliationSucceeded", "Applied revision: main@sha1:2c83ed6"),
		sum("Kustomization", "flux-system", "infrastructure", "reconciling", "Progressing", "Health check in progress"),
		sum("GitRepository", "flux-system", "flux-system", "ready", "Succeeded", "stored artifact for revision 'main@sha1:2c83ed6'"),
		sum("HelmRelease", "apps", "hello", "suspended", "", ""),
		sum("Kustomization", "team-a", "stuck", "stalled", "InvalidPath", "spec.path './nope' not found"),
	}}
	mux := http.NewServeMux()
	js := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /api/whoami", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"user": "alice", "groups": []string{"devs"}, "mode": "local", "csrfToken": "tok"})
	})
	mux.HandleFunc("GET /api/overview", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var att, susp, objs []map[string]any
		counts := map[string]map[string]any{}
		for _, o := range f.objects {
			if q := r.URL.Query().Get("q"); q != "" && !strings.Contains(o["name"].(string), q) {
				continue
			}
			objs = append(objs, o)
			if o["state"] == "failing" || o["state"] == "stalled" {
				att = append(att, o)
			}
			if o["state"] == "suspended" {
				susp = append(susp, o)
			}
			k := o["kind"].(string)
			if counts[k] == nil {
				counts[k] = map[string]any{"kind": k, "total": 0}
			}
			counts[k]["total"] = counts[k]["total"].(int) + 1
			n, _ := counts[k][o["state"].(string)].(int)
			counts[k][o["state"].(string)] = n + 1
		}
		var cl []map[string]any
		for _, c := range counts {
			cl = append(cl, c)
		}
		js(w, map[string]any{"counts": cl, "attention": att, "suspended": susp, "objects": objs})
	})
	mux.HandleFunc("GET /api/graph", func(w http.ResponseWriter, r *http.Request) {
		n := func(o map[string]any, layer, order int, waiting string) map[string]any {
			return map[string]any{"id": fmt.Sprintf("%s/%s/%s", o["kind"], o["namespace"], o["name"]), "kind": o["kind"], "namespace": o["namespace"],
				"name": o["name"], "state": o["state"], "revision": o["revision"], "layer": layer, "order": order, "waiting": waiting}
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		nodes := []map[string]any{n(f.objects[3], 0, 0, ""), n(f.objects[1], 1, 0, ""), n(f.objects[2], 2, 0, ""),
			n(f.objects[0], 3, 0, "apps waits for infrastructure at main@sha1:2c83ed64161993761f84ced0b182cfaed4edd56b")}
		edges := []map[string]any{{"from": nodes[0]["id"], "to": nodes[1]["id"], "type": "source"},
			{"from": nodes[0]["id"], "to": nodes[2]["id"], "type": "source"}, {"from": nodes[0]["id"], "to": nodes[3]["id"], "type": "source"},
			{"from": nodes[2]["id"], "to": nodes[3]["id"], "type": "dependsOn"}}
		js(w, map[string]any{"nodes": nodes, "edges": edges})
	})
	mux.HandleFunc("GET /api/objects/{kind}/{ns}/{name}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, o := range f.objects {
			if o["kind"] == r.PathValue("kind") && o["name"] == r.PathValue("name") && o["namespace"] == r.PathValue("ns") {
				deny := map[string]any{"allowed": false, "reason": "alice cannot patch kustomizations.kustomize.toolkit.fluxcd.io in namespace flux-system"}
				js(w, map[string]any{"summary": o, "conditions": []map[string]any{{"type": "Ready", "status": "False", "reason": o["reason"], "message": o["message"], "lastTransitionTime": "2026-12-01T20:00:00Z"}},
					"history": []map[string]any{{"revision": o["revision"], "firstReconciled": "2026-12-01T19:00:00Z", "lastReconciled": "2026-12-01T20:00:00Z", "totalReconciliations": 3, "lastReconciledStatus": "ReconciliationSucceeded", "digest": "sha256:abc"}},
					"tree":    map[string]any{"kind": o["kind"], "name": o["name"], "children": []map[string]any{{"kind": "Deployment", "namespace": "apps", "name": "podinfo", "apiVersion": "apps/v1", "state": "ready"}}},
					"source":  map[string]any{"kind": "GitRepository", "namespace": "flux-system", "name": "flux-system"}, "dependsOn": []map[string]any{},
					"permissions": map[string]any{"reconcile": map[string]any{"allowed": true}, "suspend": deny, "resume": deny}})
				return
			}
		}
		w.WriteHeader(404)
		js(w, map[string]any{"error": "not found"})
	})
	mux.HandleFunc("GET /api/objects/{kind}/{ns}/{name}/events", func(w http.ResponseWriter, r *http.Request) {
		js(w, []map[string]any{{"type": "Warning", "reason": "BuildFailed", "message": "kustomize build failed", "count": 2, "lastTime": "2026-12-01T20:00:00Z", "source": "kustomize-controller"}})
	})
	mux.HandleFunc("GET /api/objects/{kind}/{ns}/{name}/diff", func(w http.ResponseWriter, r *http.Request) {
		js(w, map[string]any{"revision": "main@sha1:2c83ed6", "changed": []map[string]any{{"id": "apps/Deployment/podinfo", "diff": "--- live\n+++ merged\n@@ -1,3 +1,3 @@\n spec:\n-  replicas: 1\n+  replicas: 2"}},
			"created": []map[string]any{{"id": "apps/ConfigMap/new", "diff": "+data:\n+  a: b"}}, "deleted": []map[string]any{{"id": "apps/Secret/old"}}})
	})
	mux.HandleFunc("GET /api/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		ch := make(chan string, 10)
		f.mu.Lock()
		f.subs = append(f.subs, ch)
		f.mu.Unlock()
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case m := <-ch:
				fmt.Fprint(w, m)
				w.(http.Flusher).Flush()
			}
		}
	})
	mux.HandleFunc("POST /api/actions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Action  string
			Targets []map[string]string
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		var results []map[string]any
		f.mu.Lock()
		for _, tg := range req.Targets {
			for _, o := range f.objects {
				if o["kind"] == tg["kind"] && o["name"] == tg["name"] && o["namespace"] == tg["namespace"] {
					o["state"], o["reason"], o["message"] = "ready", "ReconciliationSucceeded", "Applied revision: main@sha1:ffff"
					b, _ := json.Marshal(o)
					for _, s := range f.subs {
						s <- "event: object\ndata: " + string(b) + "\n\n"
						s <- `event: k8sevent` + "\ndata: " + `{"ref":{"kind":"` + tg["kind"] + `","namespace":"` + tg["namespace"] + `","name":"` + tg["name"] + `"},"event":{"type":"Normal","reason":"ReconcileRequested","message":"reconcile requested by alice","count":1,"source":"weir-ui"}}` + "\n\n"
					}
				}
			}
			results = append(results, map[string]any{"ref": tg, "ok": true})
		}
		f.mu.Unlock()
		js(w, map[string]any{"results": results})
	})
	files := http.FileServerFS(web.FS())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		if _, err := fs.Stat(web.FS(), strings.TrimPrefix(r.URL.Path, "/")); err != nil || r.URL.Path == "/" {
			http.ServeFileFS(w, r, web.FS(), "index.html")
			return
		}
		files.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestFakeSmoke(t *testing.T) {
	b := newBrowser(t, startFake(t))
	for _, scheme := range []string{"light", "dark"} {
		b.colorScheme(scheme)
		for _, p := range []string{"/", "/graph", "/objects/Kustomization/flux-system/apps"} {
			b.open(p)
			b.screenshot(scheme + strings.ReplaceAll(p, "/", "_"))
			b.checkContrast(scheme + " " + p)
		}
	}
	b.do("click", chromedp.Click(chromedp.ID("action-reconcile")))
	b.waitJS("ready", `document.getElementById('object-state').dataset.state === 'ready'`, 5*time.Second)
	b.screenshot("after")
}
