package cli_test

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

const createdRev = "main@sha1:67e2c98a60dc92283531412a9e604dd4bae005a9"

// sourceReady answers as a source controller would: an artifact and
// Ready at the current generation.
func sourceReady(u *unstructured.Unstructured) map[string]any {
	if kinds.ObservedGeneration(u) == u.GetGeneration() {
		return nil
	}
	return map[string]any{
		"artifact":   map[string]any{"revision": createdRev, "digest": "sha256:0", "path": "p", "url": "http://127.0.0.1/p", "lastUpdateTime": "2026-11-01T10:00:00Z", "size": int64(2048)},
		"conditions": readyCondition("Succeeded", "stored artifact for revision '"+createdRev+"'"),
	}
}

// TestCreateExport pins what `create … --export` prints for each kind.
func TestCreateExport(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	assertCreateExports(t, ns, []createStep{
		{"create/export-git.golden", []string{"source", "git", "podinfo", "--url=https://github.com/stefanprodan/podinfo",
			"--branch=main", "--interval=10m", "--ignore-paths=/docs,*.md", "--label=team=apps", "--fetch-timeout=2m"}},
		{"create/export-git-semver.golden", []string{"source", "git", "podinfo", "--url=ssh://git@127.0.0.1/podinfo",
			"--tag-semver=>=6.0.0", "--secret-ref=podinfo-auth", "--provider=github", "--sparse-checkout-paths=deploy"}},
		{"create/export-oci.golden", []string{"source", "oci", "podinfo", "--url=oci://ghcr.io/stefanprodan/manifests/podinfo",
			"--tag=6.1.6", "--secret-ref=regcred", "--verify-provider=cosign", "--insecure"}},
		{"create/export-bucket.golden", []string{"source", "bucket", "podinfo", "--bucket-name=podinfo",
			"--endpoint=127.0.0.1:9000", "--insecure", "--provider=aws", "--region=us-east-1", "--secret-ref=bucket-creds"}},
		{"create/export-ks.golden", []string{"kustomization", "apps", "--source=GitRepository/podinfo.flux-system",
			"--path=deploy/../apps", "--prune", "--depends-on=infra,flux-system/crds@dep.status.ready",
			"--health-check=Deployment/podinfo.apps", "--target-namespace=apps", "--service-account=deployer",
			"--decryption-provider=sops", "--decryption-secret=sops-age", "--retry-interval=1m", "--interval=5m"}},
		{"create/export-ks-health.golden", []string{"ks", "frontend", "--source=GitRepository/fleet", "--path=./dev",
			"--health-check=Deployment/frontend.dev", "--health-check=StatefulSet/db.dev", "--health-check=HelmRelease/redis.dev"}},
		{"create/export-ks-wait.golden", []string{"ks", "apps", "--source=OCIRepository/NSX/podinfo", "--wait", "--health-check-timeout=3m"}},
		{"create/export-secret-git.golden", []string{"secret", "git", "git-auth", "--url=https://127.0.0.1/repo.git",
			"-u", "git", "-p", "s3cret", "--ca-crt-file=testdata/create/ca.crt"}},
		{"create/export-secret-oci.golden", []string{"secret", "oci", "regcred", "--url=ghcr.io", "-u", "bot", "-p", "s3cret"}},
		{"create/export-secret-tls.golden", []string{"secret", "tls", "certs", "--tls-crt-file=testdata/create/tls.crt",
			"--tls-key-file=testdata/create/tls.key", "--ca-crt-file=testdata/create/ca.crt"}},
		{"create/export-tenant.golden", []string{"tenant", "dev-team", "--with-namespace=frontend", "--with-namespace=backend",
			"--label=env=dev"}},
		{"create/export-oci-layer-selector.golden", []string{"source", "oci", "podinfo", "--url=oci://ghcr.io/stefanprodan/manifests/podinfo",
			"--tag=6.1.6", "--layer-selector-media-type=application/vnd.cncf.helm.chart.content.v1.tar+gzip", "--layer-selector-operation=copy"}},
		{"create/export-tenant-skip-namespace.golden", []string{"tenant", "dev-team", "--with-namespace=frontend", "--skip-namespace"}},
		{"create/export-tenant-no-account.golden", []string{"tenant", "dev-team", "--with-namespace=frontend",
			"--with-service-account=false"}},
	})
}

// createStep is one `weir create` command line and the golden file of what
// it prints.
type createStep struct {
	golden string
	args   []string
}

// assertCreateExports runs each step as `weir create ARGS --export -n ns`
// and compares its output with the golden file.
func assertCreateExports(t *testing.T, ns string, steps []createStep) {
	t.Helper()
	for _, s := range steps {
		res := weir(t, append(append([]string{"create"}, s.args...), "--export", "-n", ns)...)
		if res.Code != 0 {
			t.Errorf("%v: exit %d\n%s", s.args, res.Code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), ns)
	}
}

func TestCreateErrors(t *testing.T) {
	ns := testenv.Get(t).Namespace(t)
	for _, s := range []struct {
		args []string
		want string
	}{
		{[]string{"source", "git"}, "✗ name is required\n"},
		{[]string{"source", "git", "Pod_Info"}, "✗ name 'Pod_Info' is invalid, it should adhere to standard defined in RFC 1123, the name can only contain alphanumeric characters or '-'\n"},
		{[]string{"source", "git", "podinfo"}, "✗ url is required\n"},
		{[]string{"source", "git", "podinfo", "--url=ftp://x/y", "--branch=main"}, "✗ git URL scheme 'ftp' not supported, can be: ssh, http and https\n"},
		{[]string{"source", "git", "podinfo", "--url=https://x/y"}, "✗ a Git ref is required, use one of the following: --branch, --tag, --commit, --ref-name or --tag-semver\n"},
		{[]string{"source", "oci", "podinfo", "--url=oci://x/y"}, "✗ --tag, --tag-semver or --digest is required\n"},
		{[]string{"source", "bucket", "podinfo", "--endpoint=x"}, "✗ bucket-name is required\n"},
		{[]string{"ks", "apps", "--source=HelmRepository/x"}, "✗ invalid argument \"HelmRepository/x\" for \"--source\" flag: source kind 'HelmRepository' is not supported, must be one of: OCIRepository, GitRepository, Bucket\n"},
		{[]string{"ks", "apps", "--source=x", "--health-check=Pod/x.y"}, "✚ generating Kustomization\n✗ invalid health check kind 'Pod' can be HelmRelease, Deployment, DaemonSet or StatefulSet\n"},
		{[]string{"ks", "apps"}, "✗ source is required\n"},
		{[]string{"secret", "git", "auth", "--url=https://x/y"}, "✗ for Git over HTTP/S the username and password, or a bearer token is required\n"},
		{[]string{"secret", "oci", "auth", "--url=ghcr.io", "-u", "x"}, "✗ --password is required\n"},
		{[]string{"tenant", "dev"}, "✗ with-namespace is required\n"},
		{[]string{"source", "oci", "podinfo", "--url=oci://x/y", "--tag=1", "--layer-selector-operation=unpack"},
			"✗ invalid argument \"unpack\" for \"--layer-selector-operation\" flag: unsupported layer operation 'unpack', must be one of: extract, copy\n"},
		{[]string{"source", "git", "podinfo", "--url=ssh://git@x/y", "--branch=main", "--ssh-key-algorithm=dsa"}, "✗ invalid argument \"dsa\" for \"--ssh-key-algorithm\" flag: unsupported SSH public key algorithm 'dsa', must be one of: rsa, ecdsa, ed25519\n"},
	} {
		res := weir(t, append(append([]string{"create"}, s.args...), "-n", ns)...)
		if res.Code != 1 || res.Stderr != s.want {
			t.Errorf("create %v: exit %d, stderr %q; want 1, %q", s.args, res.Code, res.Stderr, s.want)
		}
	}
}

// TestCreateApply creates sources and a Kustomization against the API
// server, a stand-in controller making them ready, and checks what create
// printed and that the objects are what --export shows.
func TestCreateApply(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fakeController(t, kinds.GitRepository, ns, "podinfo", sourceReady)
	fakeController(t, kinds.OCIRepository, ns, "manifests", sourceReady)
	fakeController(t, kinds.Bucket, ns, "bucket", sourceReady)
	fakeController(t, kinds.Kustomization, ns, "apps", caughtUp)

	gitArgs := []string{"create", "source", "git", "podinfo", "--url=https://127.0.0.1/podinfo.git", "--branch=main",
		"-u", "git", "-p", "s3cret", "--label=team=apps", "-n", ns}
	ksArgs := []string{"create", "ks", "apps", "--source=podinfo", "--path=./deploy", "--prune", "--depends-on=infra", "-n", ns}
	ociArgs := []string{"create", "source", "oci", "manifests", "--url=oci://127.0.0.1:5000/manifests", "--tag=latest",
		"--layer-selector-media-type=application/vnd.cncf.flux.content.v1.tar+gzip", "--layer-selector-operation=extract", "-n", ns}
	steps := []struct {
		golden string
		args   []string
	}{
		{"create/git.golden", gitArgs},
		{"create/git-update.golden", gitArgs},
		{"create/oci.golden", ociArgs},
		{"create/bucket.golden", []string{"create", "source", "bucket", "bucket", "--bucket-name=fleet", "--endpoint=127.0.0.1:9000",
			"--access-key=AK", "--secret-key=SK", "-n", ns}},
		{"create/ks.golden", ksArgs},
	}
	for _, s := range steps {
		res := weir(t, s.args...)
		if res.Code != 0 {
			t.Errorf("%v: exit %d\n%s", s.args, res.Code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), ns)
	}

	// What create applied is what --export prints, as `export` reads it
	// back: every field --export shows is there, beside the CRD's defaults
	// and the credentials' secretRef.
	for _, c := range []struct{ create, export []string }{
		{gitArgs, []string{"export", "source", "git", "podinfo", "-n", ns}},
		{ksArgs, []string{"export", "ks", "apps", "-n", ns}},
		{ociArgs, []string{"export", "source", "oci", "manifests", "-n", ns}},
	} {
		var want, got map[string]any
		if err := yaml.Unmarshal([]byte(weir(t, append(c.create, "--export")...).Stdout), &want); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(weir(t, c.export...).Stdout), &got); err != nil {
			t.Fatal(err)
		}
		if path := missingFrom(want, got, ""); path != "" {
			t.Errorf("%v: the live object differs from --export at %s:\n%v\n%v", c.create, path, got, want)
		}
	}

	secret := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "podinfo"}, secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["username"]) != "git" || string(secret.Data["password"]) != "s3cret" {
		t.Errorf("git credentials secret: %v", secret.Data)
	}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "bucket-bucket"}, secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["accesskey"]) != "AK" || string(secret.Data["secretkey"]) != "SK" {
		t.Errorf("bucket credentials secret: %v", secret.Data)
	}
}

// TestCreateSecretsAndTenant applies secrets and a tenant and reads them
// back.
func TestCreateSecretsAndTenant(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	tenantNS := ns + "-tenant"
	t.Cleanup(func() {
		_ = env.Client.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNS}})
	})

	res := weir(t, "create", "secret", "git", "ssh-auth", "--url=ssh://git@127.0.0.1:2222/repo.git",
		"--known-hosts-file=testdata/create/known_hosts", "--ssh-key-algorithm=ed25519", "-n", ns)
	if res.Code != 0 || !strings.HasPrefix(res.Stderr, "✚ deploy key: ssh-ed25519 ") ||
		!strings.HasSuffix(res.Stderr, "► git secret 'ssh-auth' created in '"+ns+"' namespace\n") {
		t.Errorf("create secret git over SSH: exit %d\n%s", res.Code, res.Stderr)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ssh-auth"}, secret); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"identity", "identity.pub", "known_hosts"} {
		if len(secret.Data[k]) == 0 {
			t.Errorf("ssh secret lacks %s: %v", k, secret.Data)
		}
	}

	// Without known_hosts the user is told; the key is printed as the
	// deploy key, and create source git asks before going on.
	res = weirIO(t.Context(), t, "n\n", nil, "create", "source", "git", "ssh-repo", "--url=ssh://git@127.0.0.1:2222/repo.git",
		"--branch=main", "-n", ns)
	if res.Code != 1 || !strings.Contains(res.Stderr, "⚠ no --known-hosts-file given") ||
		!strings.Contains(res.Stderr, "✚ deploy key: ecdsa-sha2-nistp384 ") || !strings.HasSuffix(res.Stderr, "✗ aborting\n") {
		t.Errorf("create source git over SSH, answered no: exit %d\n%s", res.Code, res.Stderr)
	}

	for _, s := range []struct {
		golden string
		args   []string
	}{
		{"create/secret-oci.golden", []string{"secret", "oci", "regcred", "--url=ghcr.io", "-u", "bot", "-p", "s3cret"}},
		{"create/secret-tls.golden", []string{"secret", "tls", "certs", "--tls-crt-file=testdata/create/tls.crt", "--tls-key-file=testdata/create/tls.key"}},
		{"create/tenant.golden", []string{"tenant", "dev-team", "--with-namespace=" + tenantNS}},
		{"create/tenant-again.golden", []string{"tenant", "dev-team", "--with-namespace=" + tenantNS, "--cluster-role=view"}},
	} {
		res := weir(t, append(append([]string{"create"}, s.args...), "-n", ns)...)
		if res.Code != 0 {
			t.Errorf("%v: exit %d\n%s", s.args, res.Code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), tenantNS, ns)
	}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "regcred"}, secret); err != nil {
		t.Fatal(err)
	}
	if secret.Type != corev1.SecretTypeDockerConfigJson ||
		string(secret.Data[".dockerconfigjson"]) != `{"auths":{"ghcr.io":{"username":"bot","password":"s3cret","auth":"Ym90OnMzY3JldA=="}}}` {
		t.Errorf("oci secret: %s %s", secret.Type, secret.Data)
	}
	rb := &rbacv1.RoleBinding{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: tenantNS, Name: "dev-team-reconciler"}, rb); err != nil {
		t.Fatal(err)
	}
	if rb.RoleRef.Name != "view" || len(rb.Subjects) != 2 || rb.Subjects[0].Name != "gotk:"+tenantNS+":reconciler" ||
		rb.Labels["toolkit.fluxcd.io/tenant"] != "dev-team" {
		t.Errorf("tenant role binding: %+v", rb)
	}
	sa := &corev1.ServiceAccount{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: tenantNS, Name: "dev-team"}, sa); err != nil {
		t.Fatal(err)
	}
}

// TestCreateTenantSkipNamespace: --skip-namespace applies into a namespace
// that exists without touching it, and --with-service-account=false binds
// the reconciler user alone and creates no ServiceAccount.
func TestCreateTenantSkipNamespace(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	res := weir(t, "create", "tenant", "ops", "--with-namespace="+ns, "--skip-namespace", "--with-service-account=false")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Output())
	}
	assertGolden(t, "create/tenant-skip-namespace.golden", res.Output(), ns)
	live := &corev1.Namespace{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: ns}, live); err != nil {
		t.Fatal(err)
	}
	if _, ok := live.Labels["toolkit.fluxcd.io/tenant"]; ok {
		t.Errorf("--skip-namespace labelled the namespace: %v", live.Labels)
	}
	rb := &rbacv1.RoleBinding{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ops-reconciler"}, rb); err != nil {
		t.Fatal(err)
	}
	if len(rb.Subjects) != 1 || rb.Subjects[0].Kind != "User" || rb.Subjects[0].Name != "gotk:"+ns+":reconciler" {
		t.Errorf("role binding subjects: %+v", rb.Subjects)
	}
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "ops"}, &corev1.ServiceAccount{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("--with-service-account=false: ServiceAccount get: %v, want not found", err)
	}
}

// missingFrom returns the path of the first value of want that got does
// not hold, or "" when got holds all of want.
func missingFrom(want, got any, path string) string {
	wm, ok := want.(map[string]any)
	if !ok {
		if reflect.DeepEqual(want, got) {
			return ""
		}
		return path
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return path
	}
	for k, v := range wm {
		if p := missingFrom(v, gm[k], path+"."+k); p != "" {
			return p
		}
	}
	return ""
}
