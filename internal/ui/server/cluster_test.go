package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// serviceAccountToken creates ServiceAccount name in ns and returns a
// token for it from the TokenRequest API.
func serviceAccountToken(t *testing.T, env *testenv.Env, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := env.Client.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{}
	if err := env.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatalf("requesting a token for %s: %v", name, err)
	}
	return tr.Status.Token
}

func bind(t *testing.T, env *testenv.Env, ns, sa string, cluster bool, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	name := ns + "-" + sa
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: sa}}
	var objs []client.Object
	if cluster {
		objs = []client.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}},
		}
	} else {
		objs = []client.Object{
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}},
		}
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if cluster {
				_ = env.Client.Delete(context.Background(), o)
			}
		})
	}
}

// uiRules are the UI ServiceAccount's, as the ui component's ClusterRole.
var uiRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{""}, Resources: []string{"users", "groups", "serviceaccounts"}, Verbs: []string{"impersonate"}},
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"impersonate"}},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

func TestClusterModeImpersonatesTheUser(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fleet(t, env, ns)
	uiToken := serviceAccountToken(t, env, ns, "weir-ui")
	bind(t, env, ns, "weir-ui", true, uiRules...)
	aliceToken := serviceAccountToken(t, env, ns, "alice")
	bind(t, env, ns, "alice", false,
		rbacv1.PolicyRule{APIGroups: []string{"source.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io"}, Resources: []string{"*"},
			Verbs: []string{"get", "list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{"kustomize.toolkit.fluxcd.io"}, Resources: []string{"kustomizations"}, Verbs: []string{"patch"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"list"}},
	)
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = uiToken
	r := start(t, "cluster", cfg)
	b := newBrowser(t, r.Base)

	if code := b.getJSON("/api/overview?namespace="+ns, nil); code != http.StatusUnauthorized {
		t.Fatalf("overview without a session: %d, want 401", code)
	}
	if code := b.post("/api/login", map[string]string{"token": "not-a-token"}, nil); code != http.StatusUnauthorized {
		t.Errorf("login with a bad token: %d, want 401", code)
	}
	var who struct{ User, Mode, CSRFToken string }
	if code := b.post("/api/login", map[string]string{"token": aliceToken}, &who); code != http.StatusOK {
		t.Fatalf("login: %d %+v", code, who)
	}
	alice := "system:serviceaccount:" + ns + ":alice"
	if who.User != alice || who.Mode != "cluster" {
		t.Errorf("login answered %+v, want user %s in cluster mode", who, alice)
	}
	b.csrf = who.CSRFToken

	var o struct {
		Objects []struct{ Name string }
		Skipped map[string]string
		Hidden  []string
	}
	if code := b.getJSON("/api/overview?namespace="+ns, &o); code != http.StatusOK || len(o.Objects) != 3 {
		t.Errorf("overview as alice: %d %+v", code, o)
	}
	if !strings.Contains(o.Skipped["HelmRelease"], "forbidden") {
		t.Errorf("HelmReleases, which alice may not list, skipped as %q", o.Skipped["HelmRelease"])
	}
	if !slices.Contains(o.Hidden, "HelmRelease") || slices.Contains(o.Hidden, "Kustomization") ||
		slices.Contains(o.Hidden, "GitRepository") {
		t.Errorf("hidden kinds = %v, want HelmRelease among them and neither Kustomization nor GitRepository", o.Hidden)
	}
	// Cluster-wide alice may list nothing: every kind is hidden, none
	// counted as empty.
	var wide struct{ Hidden []string }
	if code := b.getJSON("/api/overview", &wide); code != http.StatusOK || !slices.Contains(wide.Hidden, "Kustomization") {
		t.Errorf("cluster-wide overview as alice: %d, hidden %v, want Kustomization hidden", code, wide.Hidden)
	}
	// The ServiceAccount's own rights never stand in: cluster-wide, alice
	// may list nothing.
	var denied map[string]string
	if code := b.getJSON("/api/objects/Kustomization/default/x", &denied); code != http.StatusForbidden ||
		!strings.Contains(denied["error"], alice) {
		t.Errorf("object outside alice's namespace: %d %v, want 403 naming her", code, denied)
	}

	var page struct {
		Permissions map[string]struct {
			Allowed bool
			Reason  string
		}
	}
	if code := b.getJSON("/api/objects/GitRepository/"+ns+"/repo", &page); code != http.StatusOK {
		t.Fatalf("object page: %d", code)
	}
	wantReason := alice + " cannot patch gitrepositories.source.toolkit.fluxcd.io in namespace " + ns
	if p := page.Permissions["suspend"]; p.Allowed || p.Reason != wantReason {
		t.Errorf("suspend permission on the GitRepository = %+v, want refused: %s", p, wantReason)
	}

	var res struct {
		Results []struct {
			OK    bool
			Error string
		}
		Error string
	}
	suspendRepo := map[string]any{"action": "suspend", "targets": []map[string]string{{"kind": "GitRepository", "namespace": ns, "name": "repo"}}}
	if code := b.post("/api/actions", suspendRepo, &res); code != http.StatusForbidden || res.Error != wantReason {
		t.Errorf("suspend GitRepository as alice: %d %+v, want 403: %s", code, res, wantReason)
	}
	if code := b.post("/api/actions", reconcileApps(ns), &res); code != http.StatusOK || !res.Results[0].OK {
		t.Fatalf("reconcile Kustomization as alice: %d %+v", code, res)
	}
	assertRecorded(t, env, ns, "ReconcileRequested", "Reconciliation requested by "+alice+" in weir-ui")
	assertFieldManager(t, env, ns, "apps", "weir-ui/"+alice)

	for _, secret := range []string{aliceToken, uiToken} {
		if strings.Contains(r.logs.String(), secret) {
			t.Errorf("a token reached the server's log")
		}
	}
	if !strings.Contains(r.logs.String(), "logged in") {
		t.Errorf("the log has no login line (captured logger broken?):\n%s", r.logs)
	}
}

// assertRecorded checks that an Event with reason and message was written
// on Kustomization apps by weir-ui.
func assertRecorded(t *testing.T, env *testenv.Env, ns, reason, message string) {
	const name = "apps"
	t.Helper()
	var list corev1.EventList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == name && ev.Reason == reason && ev.Message == message &&
			ev.ReportingController == "weir-ui" && ev.Source.Component == "weir-ui" {
			return
		}
	}
	t.Errorf("no %s Event %q on %s among %d", reason, message, name, len(list.Items))
}

func assertFieldManager(t *testing.T, env *testenv.Env, ns, name, manager string) *unstructured.Unstructured {
	t.Helper()
	u := object(t, `{"apiVersion":"kustomize.toolkit.fluxcd.io/v1","kind":"Kustomization"}`)
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	if u.GetAnnotations()["reconcile.fluxcd.io/requestedAt"] == "" {
		t.Errorf("%s has no reconcile request annotation", name)
	}
	for _, mf := range u.GetManagedFields() {
		if mf.Manager == manager {
			return u
		}
	}
	t.Errorf("%s has no field manager %s", name, manager)
	return u
}

// TestLocalEventForbidden: in local mode the Event is written with the
// user's credentials; a user who may patch but not create Events still
// gets the action done, and the server logs the missing Event.
func TestLocalEventForbidden(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fleet(t, env, ns)
	bind(t, env, ns, "bob", false,
		rbacv1.PolicyRule{APIGroups: []string{"kustomize.toolkit.fluxcd.io"}, Resources: []string{"kustomizations"},
			Verbs: []string{"get", "list", "watch", "patch"}})
	cfg := rest.CopyConfig(env.Config)
	bob := "system:serviceaccount:" + ns + ":bob"
	cfg.Impersonate = rest.ImpersonationConfig{UserName: bob, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	r := start(t, "local", cfg)
	b := localLogin(t, r)
	var res struct{ Results []struct{ OK bool } }
	if code := b.post("/api/actions", reconcileApps(ns), &res); code != http.StatusOK || !res.Results[0].OK {
		t.Fatalf("reconcile as bob: %d %+v", code, res)
	}
	if !strings.Contains(r.logs.String(), "could not record the action as an Event") {
		t.Errorf("no log line for the forbidden Event:\n%s", r.logs)
	}
}
