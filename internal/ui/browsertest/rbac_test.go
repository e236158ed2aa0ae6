package browsertest

import (
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// viewer is a user who may read every toolkit object and Event but change
// none: a ClusterRole of get, list and watch bound to them alone. The
// returned config impersonates them, as a kubeconfig with `as:` would.
func viewer(t *testing.T, f *fleet) (*rest.Config, string) {
	t.Helper()
	user := "viewer-" + f.ns
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"source.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io",
				"notification.toolkit.fluxcd.io", "image.toolkit.fluxcd.io", "", "events.k8s.io"},
			Resources: []string{"*"},
			Verbs:     []string{"get", "list", "watch"},
		}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	f.env.Create(t, role, binding)
	t.Cleanup(func() {
		_ = f.env.Client.Delete(t.Context(), binding)
		_ = f.env.Client.Delete(t.Context(), role)
	})
	cfg := rest.CopyConfig(f.env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg, user
}

// namespaceUser binds user to a Role of rules in ns and returns a config
// impersonating them.
func namespaceUser(t *testing.T, env *testenv.Env, ns, user string, rules ...rbacv1.PolicyRule) *rest.Config {
	t.Helper()
	env.Create(t,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns}, Rules: rules},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		})
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}

func TestUserWithoutPatchSeesWhyTheButtonIsDisabled(t *testing.T) {
	f := newFleet(t)
	cfg, user := viewer(t, f)
	b := newUI(t, cfg)
	if who := b.str(`document.getElementById('whoami').textContent`); !strings.Contains(who, user) {
		t.Errorf("whoami says %q, want %s", who, user)
	}
	b.open(ksURL(f.ns, "apps"))
	b.screenshot("denied")
	for _, action := range []string{"reconcile", "reconcile-source", "suspend"} {
		var got struct {
			Disabled    bool
			Denied      string
			Why         string
			DescribedBy string
			Visible     bool
		}
		b.eval(`(() => {
			const btn = document.getElementById('action-`+action+`');
			const why = document.getElementById(btn.getAttribute('aria-describedby'));
			const r = why.getBoundingClientRect();
			return {disabled: btn.disabled, denied: btn.dataset.denied, why: why.textContent,
				describedBy: btn.getAttribute('aria-describedby'), visible: r.width > 0 && r.height > 0};
		})()`, &got)
		if !got.Disabled || got.Denied != "true" {
			t.Errorf("%s: disabled %v, denied %q; want a button disabled by RBAC", action, got.Disabled, got.Denied)
		}
		if !strings.Contains(got.Why, user) || !strings.Contains(got.Why, "patch") || !strings.Contains(got.Why, "kustomizations") {
			t.Errorf("%s: the reason shown is %q, want who cannot patch what", action, got.Why)
		}
		if got.DescribedBy != "action-"+action+"-why" || !got.Visible {
			t.Errorf("%s: aria-describedby %q, reason visible %v", action, got.DescribedBy, got.Visible)
		}
	}
}

// TestNamespaceLimitedUserSeesWhatIsHidden signs in as a user who may
// list HelmReleases in one namespace only: cluster-wide, the overview says
// every kind is hidden and asks for a namespace instead of an all-clear;
// in that namespace, it names the kinds still hidden, and the counts say
// they are the kinds the user may list.
func TestNamespaceLimitedUserSeesWhatIsHidden(t *testing.T) {
	f := newFleet(t)
	cfg := namespaceUser(t, f.env, f.ns, "hr-reader-"+f.ns, rbacv1.PolicyRule{APIGroups: []string{"helm.toolkit.fluxcd.io"},
		Resources: []string{"helmreleases"}, Verbs: []string{"get", "list", "watch"}})
	b := newUI(t, cfg)

	b.open("/")
	b.waitJS("the overview to load", `document.querySelector('main')?.dataset.loaded === 'true'`, 10*time.Second)
	b.screenshot("hidden-cluster-wide")
	notice := b.str(`(() => { const n = document.querySelector('[data-testid=hidden-kinds]'); return n && !n.hidden ? n.innerText : ''; })()`)
	for _, want := range []string{"cluster-wide", "Kustomization", "HelmRelease", "GitRepository", "pick a namespace"} {
		if !strings.Contains(notice, want) {
			t.Errorf("cluster-wide notice %q lacks %q", notice, want)
		}
	}
	empty := b.str(`document.querySelector('[data-testid=attention-empty]')?.innerText || ''`)
	if strings.Contains(empty, "Nothing is stalled or failing") || !strings.Contains(empty, "hidden from you") {
		t.Errorf("attention says %q: an all-clear over kinds the user cannot see", empty)
	}

	b.open("/?namespace=" + f.ns)
	b.waitJS("the overview to load", `document.querySelector('main')?.dataset.loaded === 'true'`, 10*time.Second)
	b.screenshot("hidden-in-namespace")
	notice = b.str(`document.querySelector('[data-testid=hidden-kinds]').innerText`)
	if !strings.Contains(notice, "in namespace "+f.ns) || !strings.Contains(notice, "Kustomization") ||
		strings.Contains(notice, "HelmRelease") || strings.Contains(notice, "pick a namespace") {
		t.Errorf("in-namespace notice %q: want Kustomization hidden in %s and HelmRelease listed", notice, f.ns)
	}
	b.open("/graph?namespace=" + f.ns)
	b.waitJS("the graph to load", `document.querySelector('main')?.dataset.loaded === 'true'`, 10*time.Second)
	if graph := b.str(`document.querySelector('[data-testid=hidden-kinds]')?.innerText || ''`); !strings.Contains(graph, "Kustomization") {
		t.Errorf("the graph's notice %q does not say Kustomizations are hidden", graph)
	}
	b.open("/?namespace=" + f.ns)
	b.waitJS("the overview to load", `document.querySelector('main')?.dataset.loaded === 'true'`, 10*time.Second)
	if foot := b.str(`document.querySelector('[data-testid=counts] tfoot')?.innerText || ''`); !strings.Contains(foot, "All kinds you may list") {
		t.Errorf("counts footer %q, want it to say they are the kinds the user may list", foot)
	}
}
