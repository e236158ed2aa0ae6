package bucket

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/s3server"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

var (
	// storage is the artifact store of the reconciler the tests run against.
	storage *artifact.Storage
	// scratch is where the reconciler makes its download directories.
	scratch string
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.APIServerOnly, func(o *testenv.Options) { o.Setup = startController })
}

// startController runs the Bucket reconciler in a manager, with its
// artifact file server on 127.0.0.1, as weir-controller does.
func startController(ctx context.Context, env *testenv.Env) (err error) {
	if scratch, err = os.MkdirTemp("", "weir-scratch-"); err != nil {
		return err
	}
	go func() { <-ctx.Done(); os.RemoveAll(scratch) }()
	if storage, err = testenv.StartArtifactStorage(ctx); err != nil {
		return err
	}
	return testenv.StartManager(ctx, env, func(mgr ctrl.Manager) error {
		r := &Reconciler{Deps: testenv.SourceDeps(mgr, storage), TempDir: scratch}
		r.Auth = &auth.Settings{ObjectLevel: true, Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Cache: auth.NewCache(100, time.Hour)}
		return r.SetupWithManager(mgr, testenv.FastQueue)
	})
}

const accessKey, secretKey = "weir", "s3cret"

// fixture is an S3 server with credentials and a namespace holding a
// Secret for them.
type fixture struct {
	env *testenv.Env
	ns  string
	srv *s3server.Server
}

func newFixture(t *testing.T, opts s3server.Options) *fixture {
	t.Helper()
	env := testenv.Get(t)
	f := &fixture{env: env, ns: env.Namespace(t)}
	opts.AccessKey, opts.SecretKey = accessKey, secretKey
	f.srv = s3server.New(t, opts)
	f.createSecret(t, "creds", map[string][]byte{"accesskey": []byte(accessKey), "secretkey": []byte(secretKey)})
	return f
}

func (f *fixture) createSecret(t *testing.T, name string, data map[string][]byte) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Data: data}
	if err := f.env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// newBucket is a generic Bucket on the fixture's server, with credentials.
func (f *fixture) newBucket(name, bucketName string) *sourcev1.Bucket {
	return &sourcev1.Bucket{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: sourcev1.BucketSpec{
			Provider: sourcev1.BucketProviderGeneric, BucketName: bucketName, Endpoint: f.srv.Endpoint(), Insecure: true,
			SecretRef: &meta.LocalObjectReference{Name: "creds"},
			Interval:  metav1.Duration{Duration: time.Hour}, Timeout: &metav1.Duration{Duration: 20 * time.Second},
		},
	}
}

func (f *fixture) create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := f.env.Client.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

// revisionOf computes Flux's revision of a listing independently of the
// code under test: sha256 over sorted "key etag\n" lines.
func revisionOf(etags map[string]string) string {
	keys := make([]string, 0, len(etags))
	for k := range etags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s %s\n", k, etags[k])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// waitReady waits until obj is Ready at its generation with the given
// revision, and returns the object.
func waitReady(t *testing.T, env *testenv.Env, obj *sourcev1.Bucket, revision string) *sourcev1.Bucket {
	t.Helper()
	env.WaitForReady(t, obj, func() (bool, string) {
		return obj.Status.Artifact != nil && obj.Status.Artifact.Revision == revision, "revision not stored yet"
	})
	return obj
}

// update changes obj with change and writes it, retrying on conflicts.
func update(t *testing.T, env *testenv.Env, obj client.Object, change func()) {
	t.Helper()
	env.Update(t, obj, change)
}

// files downloads the artifact over HTTP, checks its digest and size, and
// returns the files it holds.
func files(t *testing.T, a *meta.Artifact) map[string]string {
	t.Helper()
	return testenv.ArtifactFiles(t, testenv.DownloadArtifact(t, a))
}

func TestRevisionIsStableAndFollowsObjects(t *testing.T) {
	f := newFixture(t, s3server.Options{})
	f.srv.CreateBucket(t, "app")
	etags := map[string]string{
		"deploy/app.yaml": f.srv.PutObject(t, "app", "deploy/app.yaml", "kind: ConfigMap\n"),
		"deploy/svc.yaml": f.srv.PutObject(t, "app", "deploy/svc.yaml", "kind: Service\n"),
	}
	f.srv.PutObject(t, "app", ".sourceignore", "# nothing ignored\n")
	obj := f.newBucket("app", "app")
	f.create(t, obj)
	first := revisionOf(etags)
	obj = waitReady(t, f.env, obj, first)

	ready := conditions.Get(obj, meta.ReadyCondition)
	if want := "stored artifact: revision '" + first + "'"; ready.Message != want || ready.Reason != meta.SucceededReason {
		t.Errorf("Ready = %s: %q, want %q", ready.Reason, ready.Message, want)
	}
	if c := conditions.Get(obj, sourcev1.ArtifactInStorageCondition); c == nil || c.Status != metav1.ConditionTrue || c.Message != ready.Message {
		t.Errorf("ArtifactInStorage = %+v", c)
	}
	hexDigest := strings.TrimPrefix(first, "sha256:")
	if want := "bucket/" + f.ns + "/app/" + hexDigest + ".tar.gz"; obj.Status.Artifact.Path != want {
		t.Errorf("artifact path %s, want %s", obj.Status.Artifact.Path, want)
	}
	if obj.Status.URL != obj.Status.Artifact.URL {
		t.Errorf("status.url %q, artifact URL %q", obj.Status.URL, obj.Status.Artifact.URL)
	}
	if diff := cmp.Diff(map[string]string{
		"deploy/app.yaml": "kind: ConfigMap\n", "deploy/svc.yaml": "kind: Service\n", ".sourceignore": "# nothing ignored\n",
	}, files(t, obj.Status.Artifact)); diff != "" {
		t.Errorf("artifact files (-want +got):\n%s", diff)
	}
	f.env.AssertEvent(t, obj, "NewArtifact", "stored artifact with 2 fetched files from 'app' bucket")
	firstArtifact := *obj.Status.Artifact

	// Nothing changed: a reconcile lists the bucket and downloads nothing,
	// not even the .sourceignore it read last time.
	before := f.srv.Requests()
	f.env.RequestReconcile(t, obj)
	obj = waitReady(t, f.env, obj, first)
	after := f.srv.Requests()
	if after.ObjectGets != before.ObjectGets {
		t.Errorf("an unchanged bucket was downloaded from (%d object GETs)", after.ObjectGets-before.ObjectGets)
	}
	if after.Lists <= before.Lists {
		t.Error("the reconcile did not list the bucket")
	}
	if obj.Status.Artifact.Digest != firstArtifact.Digest || obj.Status.Artifact.LastUpdateTime != firstArtifact.LastUpdateTime {
		t.Error("artifact rebuilt without a change")
	}

	// One object changes: new revision, new artifact.
	etags["deploy/app.yaml"] = f.srv.PutObject(t, "app", "deploy/app.yaml", "kind: Secret\n")
	second := revisionOf(etags)
	if second == first {
		t.Fatal("test bug: same revision")
	}
	f.env.RequestReconcile(t, obj)
	obj = waitReady(t, f.env, obj, second)
	if got := files(t, obj.Status.Artifact)["deploy/app.yaml"]; got != "kind: Secret\n" {
		t.Errorf("new artifact holds %q", got)
	}
	if !storage.Exists(firstArtifact) {
		t.Error("previous artifact collected before its TTL")
	}
}

func TestPrefixAndIgnoreRules(t *testing.T) {
	f := newFixture(t, s3server.Options{})
	f.srv.CreateBucket(t, "mixed")
	all := map[string]string{
		"apps/app.yaml":    "kind: ConfigMap\n",
		"apps/logo.png":    "png",
		"apps/README.md":   "# readme\n",
		"apps/ci/job.yaml": "kind: Job\n",
		"infra/ns.yaml":    "kind: Namespace\n",
		".github/ci.yaml":  "on: push\n",
	}
	etags := map[string]string{}
	for k, v := range all {
		etags[k] = f.srv.PutObject(t, "mixed", k, v)
	}
	pick := func(keys ...string) (map[string]string, map[string]string) {
		e, c := map[string]string{}, map[string]string{}
		for _, k := range keys {
			e[k], c[k] = etags[k], all[k]
		}
		return e, c
	}

	t.Run("prefix with default exclusions", func(t *testing.T) {
		obj := f.newBucket("prefix", "mixed")
		obj.Spec.Prefix = "apps/"
		f.create(t, obj)
		wantEtags, wantFiles := pick("apps/app.yaml", "apps/README.md", "apps/ci/job.yaml")
		obj = waitReady(t, f.env, obj, revisionOf(wantEtags))
		if diff := cmp.Diff(wantFiles, files(t, obj.Status.Artifact)); diff != "" {
			t.Errorf("artifact files (-want +got):\n%s", diff)
		}
	})

	t.Run("spec.ignore and .sourceignore", func(t *testing.T) {
		etags[".sourceignore"] = f.srv.PutObject(t, "mixed", ".sourceignore", "*.md\n/infra/\n")
		ignore := "apps/ci/\n"
		obj := f.newBucket("ignore", "mixed")
		obj.Spec.Ignore = &ignore
		f.create(t, obj)
		// Custom rules replace the defaults: logo.png and .github/ are in.
		wantEtags, wantFiles := pick("apps/app.yaml", "apps/logo.png", ".github/ci.yaml")
		wantFiles[".sourceignore"] = "*.md\n/infra/\n"
		obj = waitReady(t, f.env, obj, revisionOf(wantEtags))
		if diff := cmp.Diff(wantFiles, files(t, obj.Status.Artifact)); diff != "" {
			t.Errorf("artifact files (-want +got):\n%s", diff)
		}
		if obj.Status.ObservedIgnore == nil || *obj.Status.ObservedIgnore != ignore {
			t.Errorf("observedIgnore = %v", obj.Status.ObservedIgnore)
		}

		// spec.ignore has the last word: it re-includes the README.
		update(t, f.env, obj, func() { ignore = "apps/ci/\n!apps/README.md\n"; obj.Spec.Ignore = &ignore })
		wantEtags["apps/README.md"] = etags["apps/README.md"]
		obj = waitReady(t, f.env, obj, revisionOf(wantEtags))
		if _, ok := files(t, obj.Status.Artifact)["apps/README.md"]; !ok {
			t.Error("README.md not re-included")
		}
		if *obj.Status.ObservedIgnore != ignore {
			t.Errorf("observedIgnore = %q", *obj.Status.ObservedIgnore)
		}
	})
}

func TestUnsafeKeysAreRefused(t *testing.T) {
	f := newFixture(t, s3server.Options{})
	ctx := context.Background()
	f.srv.CreateBucket(t, "hostile")
	okETag := f.srv.PutObject(t, "hostile", "ok.yaml", "kind: ConfigMap\n")
	const etcKey = "/etc/weir-bucket-test-evil"
	_, etcBefore := os.Lstat(etcKey)

	for _, key := range []string{"../evil.yaml", etcKey} {
		t.Run(key, func(t *testing.T) {
			f.srv.PutObject(t, "hostile", key, "evil\n")
			defer f.srv.DeleteObject(t, "hostile", key)
			name := strings.Trim(strings.ReplaceAll(strings.ReplaceAll(key, "/", "-"), ".", ""), "-")
			obj := f.newBucket(name, "hostile")
			gets := f.srv.Requests().ObjectGets
			f.create(t, obj)
			defer func() { _ = f.env.Client.Delete(ctx, obj) }()
			ready := f.env.WaitForFailure(t, obj, sourcev1.BucketOperationFailedReason)
			if !strings.Contains(ready.Message, "'"+key+"'") {
				t.Errorf("message does not name the key: %q", ready.Message)
			}
			if !conditions.IsTrue(obj, sourcev1.FetchFailedCondition) {
				t.Error("FetchFailed is not True")
			}
			if n := f.srv.Requests().ObjectGets - gets; n != 0 {
				t.Errorf("%d objects downloaded from a bucket with an unsafe key", n)
			}
			assertNoFile(t, scratch, "evil.yaml")
			if _, err := os.Lstat(filepath.Join(filepath.Dir(scratch), "evil.yaml")); err == nil {
				t.Error("evil.yaml written next to the scratch directory")
			}
			if _, err := os.Lstat(etcKey); etcBefore != nil && err == nil {
				t.Errorf("%s was written", etcKey)
			}
		})
	}

	t.Run("excluded by ignore rules", func(t *testing.T) {
		f.srv.PutObject(t, "hostile", "../evil.yaml", "evil\n")
		obj := f.newBucket("ignored", "hostile")
		ignore := "evil.yaml\n"
		obj.Spec.Ignore = &ignore
		f.create(t, obj)
		obj = waitReady(t, f.env, obj, revisionOf(map[string]string{"ok.yaml": okETag}))
		if diff := cmp.Diff(map[string]string{"ok.yaml": "kind: ConfigMap\n"}, files(t, obj.Status.Artifact)); diff != "" {
			t.Errorf("artifact files (-want +got):\n%s", diff)
		}
	})

	// Every download directory is removed, whatever the outcome.
	testenv.Eventually(t, testenv.DefaultTimeout, func(context.Context) (bool, string) {
		entries, _ := os.ReadDir(scratch)
		return len(entries) == 0, fmt.Sprintf("scratch directories left behind: %v", entries)
	})
}

func TestFailuresKeepTheLastArtifact(t *testing.T) {
	f := newFixture(t, s3server.Options{})
	ctx := context.Background()
	f.srv.CreateBucket(t, "app")
	etag := f.srv.PutObject(t, "app", "a.yaml", "a: 1\n")
	secret := &corev1.Secret{}
	if err := f.env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "creds"}, secret); err != nil {
		t.Fatal(err)
	}
	obj := f.newBucket("app", "app")
	f.create(t, obj)
	obj = waitReady(t, f.env, obj, revisionOf(map[string]string{"a.yaml": etag}))
	good := *obj.Status.Artifact

	check := testenv.FailureChecks{Secrets: []string{secretKey, "guess"}, FetchFailedReason: true}
	f.env.AssertFailuresKeepArtifact(t, obj, good, check, []testenv.Sabotage{
		{
			Name: "wrong secret key",
			Break: func() {
				update(t, f.env, secret, func() { secret.Data["secretkey"] = []byte("guess") })
			},
			Reason:   sourcev1.BucketOperationFailedReason,
			Mentions: []string{"failed to confirm existence of 'app' bucket", "signature"},
		},
		{
			Name: "missing bucket",
			Break: func() {
				update(t, f.env, secret, func() { secret.Data["secretkey"] = []byte(secretKey) })
				update(t, f.env, obj, func() { obj.Spec.BucketName = "nope" })
			},
			Reason: sourcev1.BucketOperationFailedReason, Mentions: []string{"bucket 'nope' not found"},
		},
		{
			Name: "missing secret",
			Break: func() {
				update(t, f.env, obj, func() {
					obj.Spec.BucketName = "app"
					obj.Spec.SecretRef = &meta.LocalObjectReference{Name: "absent"}
				})
			},
			Reason: sourcev1.AuthenticationFailedReason, Mentions: []string{"failed to get secret '" + f.ns + "/absent'"},
		},
		{
			Name: "secret without the keys",
			Break: func() {
				f.createSecret(t, "bad-keys", map[string][]byte{"accessKey": []byte(accessKey)})
				update(t, f.env, obj, func() { obj.Spec.SecretRef = &meta.LocalObjectReference{Name: "bad-keys"} })
			},
			Reason:   sourcev1.AuthenticationFailedReason,
			Mentions: []string{"invalid 'bad-keys' secret data: required fields 'accesskey' and 'secretkey'"},
		},
	})
}

func TestCertSecretRef(t *testing.T) {
	f := newFixture(t, s3server.Options{TLS: true})
	f.srv.CreateBucket(t, "tls")
	etag := f.srv.PutObject(t, "tls", "a.yaml", "a: 1\n")
	f.createSecret(t, "ca", map[string][]byte{"ca.crt": f.srv.CAPEM()})

	obj := f.newBucket("no-ca", "tls")
	obj.Spec.Insecure = false
	f.create(t, obj)
	ready := f.env.WaitForFailure(t, obj, sourcev1.BucketOperationFailedReason)
	if !strings.Contains(ready.Message, "certificate") {
		t.Errorf("message does not explain the TLS failure: %q", ready.Message)
	}

	update(t, f.env, obj, func() { obj.Spec.CertSecretRef = &meta.LocalObjectReference{Name: "ca"} })
	waitReady(t, f.env, obj, revisionOf(map[string]string{"a.yaml": etag}))
}

// TestSupported is Flux's check of spec.sts against the provider (the
// CRD's rules refuse these at admission; an object stored before them
// still stalls with the message).
func TestSupported(t *testing.T) {
	ldap := &sourcev1.BucketSTSSpec{Provider: sourcev1.STSProviderLDAP, Endpoint: "https://sts.example.com"}
	awsSTS := &sourcev1.BucketSTSSpec{Provider: sourcev1.STSProviderAmazon, Endpoint: "https://sts.amazonaws.com"}
	withSecret := *awsSTS
	withSecret.SecretRef = &meta.LocalObjectReference{Name: "x"}
	withCert := *awsSTS
	withCert.CertSecretRef = &meta.LocalObjectReference{Name: "x"}
	tests := []struct {
		provider string
		sts      *sourcev1.BucketSTSSpec
		reason   string
		message  string
	}{
		{provider: "", sts: ldap},
		{provider: "aws", sts: awsSTS},
		{provider: "gcp"},
		{provider: "azure"},
		{provider: "oracle", reason: sourcev1.InvalidProviderConfigurationReason, message: "unsupported Bucket provider 'oracle'"},
		{provider: "gcp", sts: awsSTS, reason: sourcev1.InvalidSTSConfigurationReason, message: "STS configuration is not supported for 'gcp' bucket provider"},
		{provider: "azure", sts: ldap, reason: sourcev1.InvalidSTSConfigurationReason, message: "STS configuration is not supported for 'azure' bucket provider"},
		{provider: "aws", sts: ldap, reason: sourcev1.InvalidSTSConfigurationReason, message: "STS provider 'ldap' is not supported for 'aws' bucket provider"},
		{provider: "generic", sts: awsSTS, reason: sourcev1.InvalidSTSConfigurationReason, message: "STS provider 'aws' is not supported for 'generic' bucket provider"},
		{provider: "aws", sts: &withSecret, reason: sourcev1.InvalidSTSConfigurationReason, message: "spec.sts.secretRef is not required for the 'aws' STS provider"},
		{provider: "aws", sts: &withCert, reason: sourcev1.InvalidSTSConfigurationReason, message: "spec.sts.certSecretRef is not required for the 'aws' STS provider"},
	}
	for _, tt := range tests {
		err := supported(&sourcev1.Bucket{Spec: sourcev1.BucketSpec{Provider: tt.provider, STS: tt.sts}})
		var stall *errs.Stalling
		switch {
		case tt.message == "" && err != nil:
			t.Errorf("%s with %+v: %v", tt.provider, tt.sts, err)
		case tt.message != "" && (!errors.As(err, &stall) || stall.Reason != tt.reason || err.Error() != tt.message):
			t.Errorf("%s with %+v: %#v, want a %s stall %q", tt.provider, tt.sts, err, tt.reason, tt.message)
		}
	}
}

func TestDeletionRemovesArtifacts(t *testing.T) {
	f := newFixture(t, s3server.Options{})
	ctx := context.Background()
	f.srv.CreateBucket(t, "gone")
	etag := f.srv.PutObject(t, "gone", "a.yaml", "a: 1\n")
	obj := f.newBucket("gone", "gone")
	f.create(t, obj)
	obj = waitReady(t, f.env, obj, revisionOf(map[string]string{"a.yaml": etag}))
	dir := filepath.Join(storage.BasePath(), "bucket", f.ns, "gone")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("artifact directory missing: %v", err)
	}
	if err := f.env.Client.Delete(ctx, obj); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		err := f.env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return client.IgnoreNotFound(err) == nil && err != nil, "object still present"
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("artifact directory survived deletion: %v", err)
	}
}

// assertNoFile fails when a file called name exists in root or anywhere
// below it.
func assertNoFile(t *testing.T, root, name string) {
	t.Helper()
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			t.Errorf("%s was written", p)
		}
		return nil
	})
}
