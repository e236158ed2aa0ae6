package app

import (
	"context"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/image/controller/imagepolicy"
	"github.com/weir-gitops/weir/internal/image/controller/imagerepository"
	"github.com/weir-gitops/weir/internal/image/scan"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
)

// imageReflectorConcurrency is Flux's image-reflector-controller
// --concurrent default.
const imageReflectorConcurrency = 4

// ImageReflectorOptions are image-reflector-controller's own flags.
type ImageReflectorOptions struct {
	// CompressionThresholdKiB is Flux's --storage-compression-threshold:
	// tag lists this large or larger are stored gzipped.
	CompressionThresholdKiB int
	// MaxTags is weir's --max-tags-per-image-repository (Flux keeps every
	// tag); 0 keeps every tag.
	MaxTags int
}

// DefaultMaxTagsPerImageRepository is --max-tags-per-image-repository's
// default.
const DefaultMaxTagsPerImageRepository = 10000

func defaultImageReflectorOptions() ImageReflectorOptions {
	return ImageReflectorOptions{CompressionThresholdKiB: 64, MaxTags: DefaultMaxTagsPerImageRepository}
}

func (o *ImageReflectorOptions) addFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.CompressionThresholdKiB, "storage-compression-threshold", o.CompressionThresholdKiB,
		"size in KiB from which an ImageRepository's stored tag list is gzipped (image-reflector-controller)")
	fs.IntVar(&o.MaxTags, "max-tags-per-image-repository", o.MaxTags,
		"most tags kept per ImageRepository, the greatest in version order; beyond it the repository gets the TagLimitExceeded condition (0: no limit, as Flux)")
}

// setupImageReflector runs the ImageRepository and ImagePolicy reconcilers
// on one tag store under --storage-path (imagerepository/…, beside the
// source controller's artifacts when both run).
func setupImageReflector(ctx context.Context, deps *Deps) error {
	opts, mgr := deps.Options, deps.Manager
	store := &scan.Store{
		Dir:           filepath.Clean(opts.StoragePath),
		CompressAbove: opts.ImageReflector.CompressionThresholdKiB * 1024,
	}
	recorder := events.NewRecorder(mgr.GetEventRecorderFor(meta.ImageReflectorManager), mgr.GetScheme(), //nolint:staticcheck // SA1019: events.Recorder wraps the core/v1 record.EventRecorder; GetEventRecorder's events.k8s.io API has another signature
		meta.ImageReflectorManager, os.Getenv("POD_NAME"), opts.EventsAddr)
	concurrency := opts.Concurrent
	if concurrency == 0 {
		concurrency = imageReflectorConcurrency
	}
	setup := reconcile.SetupOptions{
		Shard:                   deps.sharder(),
		MaxConcurrentReconciles: concurrency,
		MinRetryDelay:           opts.MinRetryDelay,
		MaxRetryDelay:           opts.MaxRetryDelay,
	}
	repos := &imagerepository.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Store: store, MaxTags: opts.ImageReflector.MaxTags,
		Events: recorder, Metrics: deps.Metrics, Jitter: opts.IntervalJitter,
		Auth: deps.authSettings(opts.DefaultServiceAccount),
	}
	if err := repos.SetupWithManager(mgr, setup); err != nil {
		return err
	}
	policies := &imagepolicy.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Store: store,
		NoCrossNamespaceRefs: opts.NoCrossNamespaceRefs, Events: recorder, Metrics: deps.Metrics, Jitter: opts.IntervalJitter,
	}
	return policies.SetupWithManager(ctx, mgr, setup)
}
