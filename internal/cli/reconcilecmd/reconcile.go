package reconcilecmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/kindcmd"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// NewCommand returns `weir reconcile`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reconcile",
		Short: "Reconcile sources and resources",
		Long:  "The reconcile sub-commands trigger a reconciliation of sources and resources.",
	}
	kindcmd.AddCommands(cmd, kinds.Reconcilable, "[name]", func(k kinds.Kind) *cobra.Command {
		var o options
		c := &cobra.Command{
			ValidArgsFunction: kindcmd.CompleteNames(deps, k),
			Short:             "Reconcile a " + k.Kind,
			Long: fmt.Sprintf("The reconcile command triggers a reconciliation of a %s and waits for it to finish: "+
				"it sets the %s annotation and waits until the controller reports having handled it. "+
				"It fails as soon as the controller reports the handled request as failed (Ready=False, whatever the reason, "+
				"dependencies not ready included, or Stalled=True), and waits only while the reconciliation is in progress.",
				k.Kind, meta.ReconcileRequestAnnotation),
			Args: cobra.MaximumNArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				if len(args) == 0 {
					return fmt.Errorf("%s name is required", k.Kind)
				}
				ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
				defer cancel()
				r, err := newReconciler(streams, deps)
				if err != nil {
					return err
				}
				r.force, r.reset = o.force, o.reset
				return r.run(ctx, k, deps.Namespace(), args[0], o.withSource)
			},
		}
		switch k.Kind {
		case kinds.Kustomization.Kind:
			c.Flags().BoolVar(&o.withSource, "with-source", false, "reconcile the Kustomization's source first")
		case kinds.HelmRelease.Kind:
			c.Flags().BoolVar(&o.withSource, "with-source", false, "reconcile the HelmRelease's chart source (and HelmChart) first")
			c.Flags().BoolVar(&o.force, "force", false, "force a one-off install or upgrade of the HelmRelease ("+meta.ForceRequestAnnotation+")")
			c.Flags().BoolVar(&o.reset, "reset", false, "reset the HelmRelease's failure counters ("+meta.ResetRequestAnnotation+")")
		}
		return c
	})
	return cmd
}

type options struct {
	withSource, force, reset bool
}

type reconciler struct {
	// force and reset add the HelmRelease annotations of the same name,
	// with the request's token, to the HelmRelease's request.
	force, reset bool
	client       client.Client
	progress     output.Progress
	poll         time.Duration
}

func newReconciler(streams genericiooptions.IOStreams, deps *clideps.Deps) (*reconciler, error) {
	c, err := deps.Client()
	if err != nil {
		return nil, err
	}
	return &reconciler{client: c, progress: output.Progress{W: streams.ErrOut}, poll: deps.Poll()}, nil
}

func (r *reconciler) run(ctx context.Context, k kinds.Kind, ns, name string, withSource bool) error {
	u, err := r.get(ctx, k, ns, name)
	if err != nil {
		return err
	}
	if withSource && !kinds.Suspended(u) {
		sources, err := kinds.SourcesOf(u)
		if err != nil {
			return err
		}
		for _, s := range sources {
			if err := r.reconcile(ctx, s.Kind, s.Namespace, s.Name, false); err != nil {
				return err
			}
		}
	}
	return r.reconcile(ctx, k, ns, name, k.Kind == kinds.HelmRelease.Kind)
}

func (r *reconciler) get(ctx context.Context, k kinds.Kind, ns, name string) (*unstructured.Unstructured, error) {
	u := k.New()
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s %s not found in %s namespace", k.Kind, name, ns)
		}
		return nil, fmt.Errorf("reading %s %s in %s namespace: %w", k.Kind, name, ns, err)
	}
	return u, nil
}

// reconcile requests and awaits one reconciliation of the object; helm
// adds --force and --reset to the request.
func (r *reconciler) reconcile(ctx context.Context, k kinds.Kind, ns, name string, helm bool) error {
	u, err := r.get(ctx, k, ns, name)
	if err != nil {
		return err
	}
	if k.Static(u) {
		r.progress.Successf("reconciliation not supported by the object")
		return nil
	}
	if kinds.Suspended(u) {
		return fmt.Errorf("resource is suspended: %s %s in %s namespace", k.Kind, name, ns)
	}
	r.progress.Actionf("annotating %s %s in %s namespace", k.Kind, name, ns)
	// The token is the wall-clock time, as the flux CLI writes it: it must
	// differ from any earlier request for the controller to see a change.
	token := meta.NewReconcileRequestToken(time.Now())
	patch := client.MergeFrom(u.DeepCopy())
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[meta.ReconcileRequestAnnotation] = token
	if helm && r.force {
		ann[meta.ForceRequestAnnotation] = token
	}
	if helm && r.reset {
		ann[meta.ResetRequestAnnotation] = token
	}
	u.SetAnnotations(ann)
	if err := r.client.Patch(ctx, u, patch); err != nil {
		return fmt.Errorf("annotating %s %s in %s namespace: %w", k.Kind, name, ns, err)
	}
	r.progress.Successf("%s annotated", k.Kind)

	r.progress.Waitingf("waiting for %s reconciliation", k.Kind)
	u, err = k.Poll(ctx, r.client, client.ObjectKeyFromObject(u), r.poll, func(u *unstructured.Unstructured) (bool, error) {
		return Outcome(u, token)
	})
	if err != nil {
		return err
	}
	r.progress.Successf("%s", k.SuccessMessage(u))
	return nil
}

// Handled reports whether the controller's status.lastHandledReconcileAt
// shows it has acted on the request token: the same value, or a later
// request (someone asked again meanwhile, and that run covers ours).
func Handled(lastHandled, token string) bool {
	if lastHandled == token {
		return true
	}
	h, err1 := time.Parse(time.RFC3339Nano, lastHandled)
	t, err2 := time.Parse(time.RFC3339Nano, token)
	return err1 == nil && err2 == nil && h.After(t)
}
