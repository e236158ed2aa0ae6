package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// fleet creates, in ns, a GitRepository with an artifact, a Kustomization
// infrastructure that fails and a Kustomization apps that depends on it,
// with the statuses a controller would have written.
func fleet(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339)
	ready := func(status, reason, msg, at string) string {
		return fmt.Sprintf(`{"type":"Ready","status":%q,"reason":%q,"message":%q,"lastTransitionTime":%q}`, status, reason, msg, at)
	}
	for _, o := range []struct{ obj, status string }{
		{`{"apiVersion":"source.toolkit.fluxcd.io/v1","kind":"GitRepository","metadata":{"name":"repo"},
			"spec":{"interval":"1m","url":"https://example.com/repo.git"}}`,
			`{"observedGeneration":1,"artifact":{"revision":"main@sha1:0123abc","path":"p","url":"http://x/p","digest":"sha256:00","lastUpdateTime":"` + now + `"},
			"conditions":[` + ready("True", "Succeeded", "stored artifact for revision 'main@sha1:0123abc'", now) + `]}`},
		{`{"apiVersion":"kustomize.toolkit.fluxcd.io/v1","kind":"Kustomization","metadata":{"name":"infrastructure"},
			"spec":{"interval":"1m","prune":true,"path":"./infra","sourceRef":{"kind":"GitRepository","name":"repo"}}}`,
			`{"observedGeneration":1,"inventory":{"entries":[{"id":"` + ns + `_settings__ConfigMap","v":"v1"}]},
			"conditions":[` + ready("False", "BuildFailed", "kustomization path not found: ./infra", now) + `]}`},
		{`{"apiVersion":"kustomize.toolkit.fluxcd.io/v1","kind":"Kustomization","metadata":{"name":"apps"},
			"spec":{"interval":"1m","prune":true,"sourceRef":{"kind":"GitRepository","name":"repo"},"dependsOn":[{"name":"infrastructure"}]}}`,
			`{"observedGeneration":1,"conditions":[` + ready("False", "DependencyNotReady", "dependency '"+ns+"/infrastructure' is not ready", "2020-01-01T00:00:00Z") + `]}`},
	} {
		u := object(t, o.obj)
		u.SetNamespace(ns)
		if err := env.Client.Create(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		var status map[string]any
		if err := json.Unmarshal([]byte(o.status), &status); err != nil {
			t.Fatal(err)
		}
		u.Object["status"] = status
		if err := env.Client.Status().Update(context.Background(), u); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWhoamiLocal(t *testing.T) {
	env := testenv.Get(t)
	r := start(t, "local", env.Config)
	b := localLogin(t, r)
	var who struct {
		User, Mode, CSRFToken string
		Groups                []string
	}
	if code := b.getJSON("/api/whoami", &who); code != http.StatusOK {
		t.Fatalf("whoami: %d", code)
	}
	if who.User == "" || who.Mode != "local" || len(who.CSRFToken) != 64 || len(who.Groups) == 0 {
		t.Errorf("whoami = %+v", who)
	}
	t.Logf("local user %q groups %v", who.User, who.Groups)
	if code := newBrowser(t, r.Base).getJSON("/api/whoami", nil); code != http.StatusUnauthorized {
		t.Errorf("whoami without a session: %d, want 401", code)
	}
}

func TestOverviewAndGraph(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fleet(t, env, ns)
	b := localLogin(t, start(t, "local", env.Config))

	var o struct {
		Counts    []map[string]any
		Attention []struct{ Kind, Name, State, Reason string }
		Objects   []struct{ Kind, Name, State string }
	}
	if code := b.getJSON("/api/overview?namespace="+ns, &o); code != http.StatusOK {
		t.Fatalf("overview: %d", code)
	}
	// apps waits for infrastructure (DependencyNotReady): not a root cause,
	// so not in the attention list, and not failing.
	if len(o.Attention) != 1 || o.Attention[0].Name != "infrastructure" || o.Attention[0].Reason != "BuildFailed" {
		t.Errorf("attention = %+v, want infrastructure alone", o.Attention)
	}
	for _, obj := range o.Objects {
		if obj.Name == "apps" && obj.State != "waiting" {
			t.Errorf("apps is %q, want waiting", obj.State)
		}
	}
	if len(o.Objects) != 3 || o.Objects[0].Name != "infrastructure" {
		t.Errorf("objects = %+v, want the failing Kustomization first", o.Objects)
	}
	paging(t, b, ns)
	var g struct {
		Nodes []struct {
			ID, Waiting string
			Layer       int
		}
		Edges []struct{ From, To, Type string }
	}
	if code := b.getJSON("/api/graph?namespace="+ns, &g); code != http.StatusOK {
		t.Fatalf("graph: %d", code)
	}
	layers := map[string]int{}
	waiting := map[string]string{}
	for _, n := range g.Nodes {
		layers[n.ID], waiting[n.ID] = n.Layer, n.Waiting
	}
	apps := "Kustomization/" + ns + "/apps"
	if layers["GitRepository/"+ns+"/repo"] != 0 || layers["Kustomization/"+ns+"/infrastructure"] != 1 || layers[apps] != 2 {
		t.Errorf("layers = %v", layers)
	}
	if want := "apps waits for infrastructure at main@sha1:0123abc"; waiting[apps] != want {
		t.Errorf("apps waiting = %q, want %q", waiting[apps], want)
	}
	if len(g.Edges) != 3 {
		t.Errorf("edges = %+v, want 2 source and 1 dependsOn", g.Edges)
	}
}

// paging reads the overview's table a page at a time, sorted by name
// both ways: the pages hold the rows in order, while the counts and the
// attention list stay the whole fleet's; a column that is none is 400.
func paging(t *testing.T, b *browser, ns string) {
	t.Helper()
	type page struct {
		Counts    []struct{ Total int }
		Attention []struct{ Name string }
		Objects   []struct{ Name string }
		Total     int
		Offset    int
		Limit     int
	}
	for _, tt := range []struct {
		query string
		want  []string
		total int
	}{
		{"&sort=name&limit=2", []string{"apps", "infrastructure"}, 3},
		{"&sort=name&limit=2&offset=2", []string{"repo"}, 3},
		{"&sort=name&dir=desc&limit=2", []string{"repo", "infrastructure"}, 3},
		{"&sort=state&limit=1&offset=1", []string{"repo"}, 3},
		{"&q=app&limit=1", []string{"apps"}, 1},
	} {
		var p page
		if code := b.getJSON("/api/overview?namespace="+ns+tt.query, &p); code != http.StatusOK {
			t.Fatalf("overview%s: %d", tt.query, code)
		}
		var got []string
		for _, o := range p.Objects {
			got = append(got, o.Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) || p.Total != tt.total {
			t.Errorf("overview%s: rows %v of %d, want %v of %d", tt.query, got, p.Total, tt.want, tt.total)
		}
		if strings.Contains(tt.query, "q=") {
			continue
		}
		if len(p.Attention) != 1 || len(p.Counts) != 2 || p.Counts[0].Total+p.Counts[1].Total != 3 {
			t.Errorf("overview%s: attention %v, counts %v: want the whole fleet's", tt.query, p.Attention, p.Counts)
		}
	}
	for _, q := range []string{"&sort=owner", "&dir=up", "&limit=0", "&offset=-1", "&limit=5000"} {
		if code := b.getJSON("/api/overview?namespace="+ns+q, nil); code != http.StatusBadRequest {
			t.Errorf("overview%s: %d, want 400", q, code)
		}
	}
}
