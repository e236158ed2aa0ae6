package cli_test

import (
	"regexp"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// TestCreateReceiverExport pins what `create receiver --export` and
// `create secret receiver --export` print.
func TestCreateReceiverExport(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	for _, s := range []struct {
		golden string
		args   []string
	}{
		{"create/export-receiver.golden", []string{"receiver", "github-receiver", "--type=github", "--event=ping", "--event=push",
			"--resource=GitRepository/webapp", "--resource=GitRepository/*", "--resource=kustomization/apps.flux-system,HelmRelease/redis",
			"--resource=ImagePolicy/podinfo", "--secret-ref=receiver-token", "--label=team=apps"}},
		{"create/export-receiver-interval.golden", []string{"receiver", "generic", "--type=generic", "--secret-ref=token",
			"--resource=OCIRepository/*.*", "--interval=30m"}},
	} {
		res := weir(t, append(append([]string{"create"}, s.args...), "--export", "-n", ns)...)
		if res.Code != 0 {
			t.Errorf("%v: exit %d\n%s", s.args, res.Code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), ns)
	}

	// The webhook URL hashes the namespace: these run in a fixed one, with
	// the names and namespace of the flux CLI's examples, whose URLs they
	// reproduce.
	for _, s := range []struct {
		golden string
		args   []string
	}{
		{"create/export-secret-receiver.golden", []string{"receiver-secret", "--type=github",
			"--token=test-token", "--hostname=flux.example.com"}},
		{"create/export-secret-receiver-gcr.golden", []string{"gcr-secret", "--type=gcr",
			"--token=test-token", "--hostname=flux.example.com", "--email-claim=sa@project.iam.gserviceaccount.com"}},
	} {
		res := weir(t, append(append([]string{"create", "secret", "receiver"}, s.args...), "--export", "-n", "my-namespace")...)
		if res.Code != 0 {
			t.Errorf("%v: exit %d\n%s", s.args, res.Code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output())
	}
}

func TestCreateReceiverErrors(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	for _, s := range []struct {
		args []string
		want string
	}{
		{[]string{"receiver", "github", "--secret-ref=token", "--resource=GitRepository/webapp"}, "✗ Receiver type is required\n"},
		{[]string{"receiver", "github", "--type=github", "--resource=GitRepository/webapp"}, "✗ secret ref is required\n"},
		{[]string{"receiver", "github", "--type=github", "--secret-ref=token"}, "✗ at least one resource is required\n"},
		{[]string{"receiver", "github", "--type=github", "--secret-ref=token", "--resource=webapp"},
			"✗ invalid resource 'webapp', must be in format <kind>/<name> or <kind>/<name>.<namespace>\n"},
		{[]string{"receiver", "github", "--type=github", "--secret-ref=token", "--resource=GitRepository/"},
			"✗ invalid resource 'GitRepository/', must be in format <kind>/<name> or <kind>/<name>.<namespace>\n"},
		{[]string{"receiver", "github", "--type=github", "--secret-ref=token", "--resource=GitRepository/flux-system/webapp"},
			"✗ invalid resource 'GitRepository/flux-system/webapp', must be in format <kind>/<name> or <kind>/<name>.<namespace>\n"},
		{[]string{"receiver", "github", "--type=github", "--secret-ref=token", "--resource=Deployment/webapp"},
			"✗ resource kind 'Deployment' is not supported, must be one of: ArtifactGenerator, Bucket, ExternalArtifact, GitRepository, " +
				"HelmChart, HelmRelease, HelmRepository, ImagePolicy, ImageRepository, ImageUpdateAutomation, Kustomization, OCIRepository\n"},
		{[]string{"receiver", "github", "--type=svn"}, "✗ invalid argument \"svn\" for \"--type\" flag: unsupported receiver type 'svn', " +
			"must be one of: generic, generic-hmac, github, gitlab, bitbucket, harbor, dockerhub, quay, gcr, nexus, acr, cdevents\n"},
		{[]string{"secret", "receiver", "github", "--hostname=flux.example.com"}, "✗ --type is required\n"},
		{[]string{"secret", "receiver", "github", "--type=github"}, "✗ --hostname is required\n"},
		{[]string{"secret", "receiver", "gcr", "--type=gcr", "--hostname=flux.example.com"}, "✗ --email-claim is required for gcr receiver type\n"},
	} {
		res := weir(t, append(append([]string{"create"}, s.args...), "--export", "-n", ns)...)
		if res.Code != 1 || res.Stderr != s.want {
			t.Errorf("create %v: exit %d, stderr %q; want 1, %q", s.args, res.Code, res.Stderr, s.want)
		}
	}
}

// TestCreateReceiverApply creates a Receiver against the API server, a
// stand-in controller making it ready, and a receiver Secret with a
// generated token.
func TestCreateReceiverApply(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fakeController(t, kinds.Receiver, ns, "github-receiver", receiverReady)

	args := []string{"create", "receiver", "github-receiver", "--type=github", "--event=ping,push",
		"--resource=GitRepository/webapp", "--secret-ref=github-receiver", "-n", ns}
	for _, golden := range []string{"create/receiver.golden", "create/receiver-update.golden"} {
		res := weir(t, args...)
		if res.Code != 0 {
			t.Errorf("%v: exit %d\n%s", args, res.Code, res.Stderr)
		}
		assertGolden(t, golden, res.Output(), ns)
	}

	assertCreateMatchesExport(t, args, []string{"export", "receiver", "github-receiver", "-n", ns})

	res := weir(t, "create", "secret", "receiver", "github-receiver", "--type=github", "--hostname=flux.example.com", "-n", ns)
	if want := "► receiver secret 'github-receiver' created in '" + ns + "' namespace\n"; res.Code != 0 || res.Stderr != want {
		t.Errorf("create secret receiver: exit %d, stderr %q; want 0, %q", res.Code, res.Stderr, want)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "github-receiver"}, secret); err != nil {
		t.Fatal(err)
	}
	token := string(secret.Data["token"])
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(token) {
		t.Errorf("generated token %q, want 64 hex digits", token)
	}
	if got, want := secret.Annotations["notification.toolkit.fluxcd.io/webhook"],
		"https://flux.example.com"+notificationv1.WebhookPath(token, "github-receiver", ns); got != want {
		t.Errorf("webhook annotation %q, want %q", got, want)
	}
}

// assertCreateMatchesExport checks that what `weir <create>` applied is
// what `weir <create> --export` prints, as `weir <export>` reads it back.
func assertCreateMatchesExport(t *testing.T, create, export []string) {
	t.Helper()
	var want, got map[string]any
	if err := yaml.Unmarshal([]byte(weir(t, append(slices.Clone(create), "--export")...).Stdout), &want); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(weir(t, export...).Stdout), &got); err != nil {
		t.Fatal(err)
	}
	if path := missingFrom(want, got, ""); path != "" {
		t.Errorf("the live object differs from --export at %s:\n%v\n%v", path, got, want)
	}
}
