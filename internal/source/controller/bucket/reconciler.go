package bucket

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source"
	"github.com/weir-gitops/weir/internal/source/artifact"
	"github.com/weir-gitops/weir/internal/source/bucket"
)

// Reconciler reconciles Bucket objects.
type Reconciler struct {
	source.Deps
	// MaxDownloadSize bounds the bytes one Bucket downloads; 0 means
	// bucket.DefaultMaxDownloadSize, negative means unbounded.
	MaxDownloadSize int64
	// TempDir is where scratch directories are made; empty means
	// os.TempDir().
	TempDir string

	ignores ignoreCache
}

// Reconcile runs the shared skeleton (internal/runtime/reconcile) with this
// kind's phases.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.Run(ctx, r.Driver(), req, &sourcev1.Bucket{}, r.kind())
}

// kind is the Bucket as the skeleton runs it.
func (r *Reconciler) kind() reconcile.Kind[*sourcev1.Bucket, *outcome] {
	return reconcile.Kind[*sourcev1.Bucket, *outcome]{
		Name:       sourcev1.BucketKind,
		Conditions: conditionTypes,
		Suspended:  func(obj *sourcev1.Bucket) bool { return obj.Spec.Suspend },
		Finalize:   r.finalize,
		Begin: func(_ context.Context, obj *sourcev1.Bucket) *outcome {
			return &outcome{artifact: obj.Status.Artifact}
		},
		Phases: []reconcile.Phase[*sourcev1.Bucket, *outcome]{r.begin, r.list, r.download},
		Status: applyStatus,
		Events: r.recordEvents,
	}
}

// outcome is what the phases observed and share; applyStatus turns it into
// status.
type outcome struct {
	// client, index and ignore are what list found, for download.
	client *bucket.Client
	index  bucket.Index
	ignore string
	// revision is the digest of the upstream index, when it could be listed.
	revision string
	// artifact is the stored artifact after this run (new or kept).
	artifact *meta.Artifact
	// newArtifact is true when this run stored a new file.
	newArtifact bool
	// fetched is how many objects the new artifact holds.
	fetched int
}

// begin shows a new generation or a reconcile request as in progress.
func (r *Reconciler) begin(ctx context.Context, obj *sourcev1.Bucket, _ *outcome) error {
	return source.Begin(ctx, obj, obj.Status.ObservedGeneration, obj.Status.LastHandledReconcileAt)
}

// list reads the bucket's index and its revision; when the stored artifact
// already holds it, the run ends here.
func (r *Reconciler) list(ctx context.Context, obj *sourcev1.Bucket, out *outcome) error {
	if err := supported(obj); err != nil {
		return err
	}
	c, err := r.client(ctx, obj)
	if err != nil {
		return err
	}
	ix, ignoreText, err := r.index(ctx, obj, c)
	if err != nil {
		return err
	}
	out.client, out.index, out.ignore = c, ix, ignoreText
	if out.revision, err = ix.Revision(r.Storage.Algorithm()); err != nil {
		return &errs.Stalling{Err: err, Reason: meta.FailedReason}
	}
	if r.upToDate(obj, out.revision) {
		return reconcile.Stop
	}
	return source.Building(ctx, obj, out.revision)
}

// download fetches the listed objects and stores them as the artifact.
func (r *Reconciler) download(ctx context.Context, obj *sourcev1.Bucket, out *outcome) error {
	return r.fetchAndStore(ctx, obj, out.client, out.index, out.ignore, out)
}

// supported stalls a provider the API does not know and a spec.sts its
// provider does not take, with Flux's messages.
func supported(obj *sourcev1.Bucket) error {
	p := obj.Spec.Provider
	switch p {
	case "":
		p = sourcev1.BucketProviderGeneric
	case sourcev1.BucketProviderGeneric, sourcev1.BucketProviderAmazon, sourcev1.BucketProviderGoogle, sourcev1.BucketProviderAzure:
	default:
		return &errs.Stalling{Err: fmt.Errorf("unsupported Bucket provider '%s'", p), Reason: sourcev1.InvalidProviderConfigurationReason}
	}
	if sts := obj.Spec.STS; sts != nil {
		if err := validateSTS(p, sts); err != nil {
			return &errs.Stalling{Err: err, Reason: sourcev1.InvalidSTSConfigurationReason}
		}
	}
	return nil
}

// upToDate reports whether the stored artifact holds the listed index, so
// the download can be skipped. The index already reflects spec.prefix and
// the ignore rules, so a spec change that alters the content alters it.
func (r *Reconciler) upToDate(obj *sourcev1.Bucket, revision string) bool {
	a := obj.Status.Artifact
	return a != nil && a.Revision == revision && r.Storage.Exists(*a)
}

// client builds the provider's client from the spec and the Secrets it
// refers to.
func (r *Reconciler) client(ctx context.Context, obj *sourcev1.Bucket) (*bucket.Client, error) {
	switch obj.Spec.Provider {
	case sourcev1.BucketProviderGoogle:
		return r.gcsClient(ctx, obj)
	case sourcev1.BucketProviderAzure:
		return r.azureClient(ctx, obj)
	default:
		return r.s3Client(ctx, obj)
	}
}

// s3Client builds the generic and aws providers' minio-go client.
func (r *Reconciler) s3Client(ctx context.Context, obj *sourcev1.Bucket) (*bucket.Client, error) {
	cfg := bucket.Config{Endpoint: obj.Spec.Endpoint, Insecure: obj.Spec.Insecure, Region: obj.Spec.Region}
	if ref := obj.Spec.SecretRef; ref != nil {
		s, err := r.secret(ctx, obj.Namespace, ref.Name)
		if err != nil {
			return nil, authErr(err)
		}
		if cfg.Credentials, err = bucket.CredentialsFromSecret(s.Name, s.Data); err != nil {
			return nil, authErr(err)
		}
	}
	if ref := obj.Spec.CertSecretRef; ref != nil {
		s, err := r.secret(ctx, obj.Namespace, ref.Name)
		if err != nil {
			return nil, authErr(err)
		}
		if cfg.TLS, err = bucket.TLSFromSecret(s.Data); err != nil {
			return nil, authErr(err)
		}
	}
	var err error
	if cfg.Proxy, err = r.proxy(ctx, obj); err != nil {
		return nil, err
	}
	if err := r.s3Auth(ctx, obj, &cfg); err != nil {
		return nil, err
	}
	c, err := bucket.New(cfg)
	if err != nil {
		return nil, &errs.Stalling{Err: err, Reason: sourcev1.URLInvalidReason}
	}
	return c, nil
}

// proxy reads spec.proxySecretRef, when set.
func (r *Reconciler) proxy(ctx context.Context, obj *sourcev1.Bucket) (*url.URL, error) {
	ref := obj.Spec.ProxySecretRef
	if ref == nil {
		return nil, nil
	}
	s, err := r.secret(ctx, obj.Namespace, ref.Name)
	if err != nil {
		return nil, authErr(err)
	}
	u, err := bucket.ProxyFromSecret(obj.Namespace+"/"+ref.Name, s.Data)
	if err != nil {
		return nil, authErr(err)
	}
	return u, nil
}

func authErr(err error) error {
	return &errs.Generic{Err: err, Reason: sourcev1.AuthenticationFailedReason}
}

func (r *Reconciler) secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s); err != nil {
		return nil, fmt.Errorf("failed to get secret '%s/%s': %w", namespace, name, err)
	}
	return &s, nil
}

// index lists the bucket and keeps what the ignore rules let through. It
// returns the root .sourceignore's text too, which goes into the artifact.
// spec.timeout bounds the listing, and separately the download, as in Flux.
func (r *Reconciler) index(ctx context.Context, obj *sourcev1.Bucket, c *bucket.Client) (bucket.Index, string, error) {
	ctx, cancel := context.WithTimeout(ctx, obj.GetTimeout())
	defer cancel()
	name := obj.Spec.BucketName
	l, err := c.List(ctx, name, obj.Spec.Prefix)
	if err != nil {
		return nil, "", bucketError(err)
	}
	var ignoreText string
	if l.IgnoreFile != nil {
		if ignoreText, err = r.ignores.read(ctx, obj.UID, c, name, *l.IgnoreFile); err != nil {
			return nil, "", bucketError(err)
		}
	}
	rules := []artifact.IgnoreRules{{Text: ignoreText}}
	if obj.Spec.Ignore != nil {
		rules = append(rules, artifact.IgnoreRules{Text: *obj.Spec.Ignore})
	}
	ix, err := bucket.NewIndex(name, l.Objects, artifact.NewFilterFromRules(rules...))
	if err != nil {
		return nil, "", bucketError(err)
	}
	return ix, ignoreText, nil
}

func (r *Reconciler) fetchAndStore(ctx context.Context, obj *sourcev1.Bucket, c *bucket.Client, ix bucket.Index, ignoreText string, out *outcome) error {
	dir, err := os.MkdirTemp(r.TempDir, fmt.Sprintf("bucket-%s-%s-", obj.Namespace, obj.Name))
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("failed to create temporary working directory: %w", err), Reason: sourcev1.DirCreationFailedReason}
	}
	defer func() { _ = os.RemoveAll(dir) }()

	dlCtx, cancel := context.WithTimeout(ctx, obj.GetTimeout())
	got, err := c.Download(dlCtx, obj.Spec.BucketName, ix, dir, bucket.DownloadOptions{MaxSize: r.MaxDownloadSize})
	cancel()
	if err != nil {
		return bucketError(err)
	}
	// Objects may have changed between listing and download; the artifact
	// is named after what was actually fetched, as in Flux.
	if out.revision, err = got.Revision(r.Storage.Algorithm()); err != nil {
		return &errs.Stalling{Err: err, Reason: meta.FailedReason}
	}
	if ignoreText != "" {
		// Flux's artifact carries the root .sourceignore as well.
		if err := writeIgnoreFile(dir, ix, ignoreText); err != nil {
			return &errs.Generic{Err: err, Reason: sourcev1.ArchiveOperationFailedReason}
		}
	}

	unlock, err := r.Storage.Lock(ctx, sourcev1.BucketKind, obj.Namespace, obj.Name)
	if err != nil {
		return &errs.Generic{Err: fmt.Errorf("failed to acquire lock for artifact: %w", err), Reason: sourcev1.AcquireLockFailedReason}
	}
	defer unlock()
	_, hexDigest, _ := strings.Cut(out.revision, ":")
	a := r.Storage.NewArtifactFor(sourcev1.BucketKind, obj, out.revision, hexDigest+".tar.gz")
	if _, err := r.Storage.Archive(ctx, &a, dir, nil); err != nil {
		return &errs.Generic{Err: fmt.Errorf("unable to archive artifact to storage: %w", err), Reason: sourcev1.ArchiveOperationFailedReason}
	}
	out.artifact, out.newArtifact, out.fetched = &a, true, len(got)
	if _, err := r.Storage.GarbageCollect(ctx, a, r.RetentionRecords, r.RetentionTTL); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "garbage collection of old artifacts failed")
	}
	return nil
}

// writeIgnoreFile puts the root .sourceignore next to the objects, unless
// an indexed object already sits at that path (it cannot: the root
// .sourceignore is never indexed; the check keeps it that way).
func writeIgnoreFile(dir string, ix bucket.Index, text string) error {
	if _, taken := ix[artifact.SourceIgnoreFile]; taken {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.SourceIgnoreFile), []byte(text), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", artifact.SourceIgnoreFile, err)
	}
	return nil
}

// bucketError classifies a listing or download failure: bad configuration
// stalls, everything else is a BucketOperationFailed to retry.
func bucketError(err error) error {
	if errors.Is(err, bucket.ErrInvalidConfig) {
		return &errs.Stalling{Err: err, Reason: sourcev1.URLInvalidReason}
	}
	return &errs.Generic{Err: err, Reason: sourcev1.BucketOperationFailedReason}
}

// finalize removes the object's artifacts, then the finalizer.
func (r *Reconciler) finalize(ctx context.Context, obj *sourcev1.Bucket) error {
	if _, err := r.Storage.RemoveAll(sourcev1.BucketKind, obj.Namespace, obj.Name); err != nil {
		return fmt.Errorf("garbage collecting artifacts of deleted object: %w", err)
	}
	r.ignores.forget(obj.UID)
	obj.Status.Artifact = nil
	obj.Status.URL = ""
	controllerutil.RemoveFinalizer(obj, meta.Finalizer)
	ctrl.LoggerFrom(ctx).Info("artifacts removed, finalizer released")
	return nil
}
