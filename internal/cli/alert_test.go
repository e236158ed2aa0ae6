package cli_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// TestAlerts takes Alerts and Providers through every verb. They are static
// (no controller writes their status), so nothing here stands in for one:
// get shows them ready, reconcile declines, resume does not wait.
func TestAlerts(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "alert/objects.yaml", ns)

	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"get providers", []string{"get", "alert-providers"}, 0, "alert/get-providers.golden"},
		{"get one provider by the singular", []string{"get", "alert-provider", "slack"}, 0, "alert/get-provider-one.golden"},
		{"get alerts", []string{"get", "alerts"}, 0, "alert/get-alerts.golden"},
		{"get alerts wide", []string{"get", "alerts", "-o", "wide"}, 0, "alert/get-alerts-wide.golden"},
		{"get all", []string{"get", "all"}, 0, "alert/get-all.golden"},
		{"get missing", []string{"get", "alerts", "missing"}, 1, "alert/get-missing.golden"},
		{"export alert", []string{"export", "alert", "apps"}, 0, "alert/export-alert.golden"},
		{"export provider", []string{"export", "alert-provider", "github"}, 0, "alert/export-provider.golden"},
		{"reconcile", []string{"reconcile", "alert", "apps"}, 0, "alert/reconcile.golden"},
		{"suspend", []string{"suspend", "alert", "apps"}, 0, "alert/suspend.golden"},
		{"get suspended", []string{"get", "alerts", "apps"}, 0, "alert/get-suspended.golden"},
		{"resume", []string{"resume", "alert", "apps"}, 0, "alert/resume.golden"},
		{"resume provider", []string{"resume", "alert-provider", "github"}, 0, "alert/resume-provider.golden"},
		{"delete silently", []string{"delete", "alert", "zz-old", "-s"}, 0, "alert/delete.golden"},
	}
	for _, s := range steps {
		res := weir(t, append(s.args, "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), ns)
	}

	for _, c := range []struct {
		k    kinds.Kind
		name string
	}{{kinds.Alert, "apps"}, {kinds.Provider, "github"}} {
		u := c.k.New()
		if err := env.Client.Get(t.Context(), keyOf(ns, c.name), u); err != nil {
			t.Fatal(err)
		}
		if kinds.Suspended(u) {
			t.Errorf("%s %s still suspended after resume", c.k.Kind, c.name)
		}
	}
	if err := env.Client.Get(t.Context(), keyOf(ns, "zz-old"), kinds.Alert.New()); err == nil {
		t.Error("zz-old still exists after delete")
	}
}

// TestAlertsAllNamespaces lists Alerts and Providers across namespaces.
func TestAlertsAllNamespaces(t *testing.T) {
	env := testenv.Get(t)
	ns, ns2 := env.Namespace(t), env.Namespace(t)
	applyFixture(t, "alert/two-namespaces.yaml", ns, ns2)
	for _, s := range []struct{ use, golden string }{
		{"alerts", "alert/get-alerts-all-namespaces.golden"},
		{"alert-providers", "alert/get-providers-all-namespaces.golden"},
	} {
		res := weir(t, "get", s.use, "-A", "-l", "weir.test/case="+ns)
		if res.Code != 0 {
			t.Fatalf("get %s -A: exit %d: %s", s.use, res.Code, res.Stderr)
		}
		// The namespaces' names are random: compare the rows sorted.
		out := strings.NewReplacer(ns2+"\t", "NS2\t", ns+"\t", "NS\t").Replace(res.Stdout)
		lines := strings.SplitAfter(out, "\n")
		sort.Strings(lines[1:])
		assertGolden(t, s.golden, strings.Join(lines, ""))
	}
}

// TestCreateAlertExport pins what `create alert` and `create alert-provider`
// print with --export.
func TestCreateAlertExport(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	assertCreateExports(t, ns, []createStep{
		{"create/export-alert.golden", []string{"alert", "apps", "--provider-ref=slack", "--event-severity=info",
			"--event-source=GitRepository/*,kustomization/apps.flux-system", "--event-source=HelmRelease/redis", "--label=team=apps"}},
		{"create/export-alert-minimal.golden", []string{"alert", "errors", "--provider-ref=slack", "--event-source=Kustomization/*"}},
		{"create/export-alert-provider.golden", []string{"alert-provider", "slack", "--type=slack", "--channel=general",
			"--username=weir", "--address=https://hooks.slack.com/services/T0/B0/X", "--secret-ref=slack-webhook"}},
		{"create/export-alert-provider-minimal.golden", []string{"alert-provider", "hook", "--type=generic"}},
	})
}

func TestCreateAlertErrors(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	for _, s := range []struct {
		args []string
		want string
	}{
		{[]string{"alert", "apps", "--event-source=Kustomization/*"}, "✗ provider ref is required\n"},
		{[]string{"alert", "apps", "--provider-ref=slack"}, "✗ at least one event source is required\n"},
		{[]string{"alert", "apps", "--provider-ref=slack", "--event-source=apps"},
			"✗ invalid event source 'apps', must be in format <kind>/<name> or <kind>/<name>.<namespace>\n"},
		{[]string{"alert", "apps", "--provider-ref=slack", "--event-source=Kustomization/"},
			"✗ invalid event source 'Kustomization/', must be in format <kind>/<name> or <kind>/<name>.<namespace>\n"},
		{[]string{"alert", "apps", "--provider-ref=slack", "--event-source=Deployment/apps"},
			"✗ event source kind 'Deployment' is not supported, must be one of: ArtifactGenerator, Bucket, ExternalArtifact, GitRepository, " +
				"HelmChart, HelmRelease, HelmRepository, ImagePolicy, ImageRepository, ImageUpdateAutomation, Kustomization, OCIRepository\n"},
		{[]string{"alert", "apps", "--provider-ref=slack", "--event-source=Kustomization/*", "--event-severity=warning"},
			"✗ invalid argument \"warning\" for \"--event-severity\" flag: unsupported event severity 'warning', must be one of: info, error\n"},
		{[]string{"alert-provider", "slack", "--channel=general"}, "✗ Provider type is required\n"},
		{[]string{"alert-provider", "gh", "--type=github", "--secret-ref=t"},
			"✗ github provider needs --address, the URL of the Git repository\n"},
		{[]string{"alert-provider", "gh", "--type=github", "--address=https://github.com/org", "--secret-ref=t"},
			"✗ invalid --address https://github.com/org: github address needs the repository as <owner>/<repo>, got \"org\"\n"},
		{[]string{"alert-provider", "ado", "--type=azuredevops", "--address=https://dev.azure.com/org/proj/repo", "--secret-ref=t"},
			"✗ invalid --address https://dev.azure.com/org/proj/repo: azuredevops address must be https://dev.azure.com/<org>/<project>/_git/<repo>, got path \"org/proj/repo\"\n"},
		{[]string{"alert-provider", "bb", "--type=bitbucketserver", "--address=https://bb.example.com/projects/P/repos/r"},
			"✗ invalid --address https://bb.example.com/projects/P/repos/r: bitbucketserver address must be the HTTPS clone URL, .../scm/<project>/<repo>.git\n"},
		{[]string{"alert-provider", "gl", "--type=gitlab", "--address=https://gitlab.com/group/app"},
			"✗ gitlab provider needs --secret-ref, a Secret with the token to set commit statuses\n"},
		{[]string{"alert-provider", "pr", "--type=githubpullrequestcomment", "--secret-ref=t"},
			"✗ githubpullrequestcomment provider needs --address, the URL of the Git repository\n"},
		{[]string{"alert-provider", "pr", "--type=giteapullrequestcomment", "--address=https://gitea.example.com/org", "--secret-ref=t"},
			"✗ invalid --address https://gitea.example.com/org: giteapullrequestcomment address needs the repository as <owner>/<repo>, got \"org\"\n"},
		{[]string{"alert-provider", "mr", "--type=gitlabmergerequestcomment", "--address=https://gitlab.com/group/app"},
			"✗ gitlabmergerequestcomment provider needs --secret-ref, a Secret with the token to comment on pull and merge requests\n"},
		{[]string{"alert-provider", "gha", "--type=githubdispatch", "--address=git@github.com:org/app.git"},
			"✗ githubdispatch provider needs --secret-ref, a Secret with the token to dispatch repository events\n"},
	} {
		res := weir(t, append(append([]string{"create"}, s.args...), "--export", "-n", ns)...)
		if res.Code != 1 || res.Stderr != s.want {
			t.Errorf("create %v: exit %d, stderr %q; want 1, %q", s.args, res.Code, res.Stderr, s.want)
		}
	}
	res := weir(t, "create", "alert-provider", "slack", "--type=irc", "--export", "-n", ns)
	if res.Code != 1 || !strings.HasPrefix(res.Stderr, "✗ unsupported provider type 'irc', must be one of: slack, discord, ") {
		t.Errorf("create alert-provider --type=irc: exit %d, stderr %q", res.Code, res.Stderr)
	}
}

// TestCreateAlertApply creates a Provider and an Alert against the API
// server, twice: created, then updated; neither waits for a controller.
func TestCreateAlertApply(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	for _, c := range []struct {
		args    []string
		goldens []string
		export  []string
	}{
		{[]string{"create", "alert-provider", "slack", "--type=slack", "--channel=general", "--secret-ref=slack-webhook"},
			[]string{"create/alert-provider.golden", "create/alert-provider-update.golden"}, []string{"export", "alert-provider", "slack"}},
		{[]string{"create", "alert", "apps", "--provider-ref=slack", "--event-severity=error",
			"--event-source=GitRepository/*,Kustomization/apps." + ns},
			[]string{"create/alert.golden", "create/alert-update.golden"}, []string{"export", "alert", "apps"}},
	} {
		args := append(c.args, "-n", ns)
		for _, golden := range c.goldens {
			res := weir(t, args...)
			if res.Code != 0 {
				t.Errorf("%v: exit %d\n%s", args, res.Code, res.Stderr)
			}
			assertGolden(t, golden, res.Output(), ns)
		}
		assertCreateMatchesExport(t, args, append(c.export, "-n", ns))
	}
}
