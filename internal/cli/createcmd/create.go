package createcmd

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/exportcmd"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// FieldManager owns the fields create applies: the name the flux CLI's own
// writes carry, so that flux and weir update each other's objects cleanly.
const FieldManager = "flux"

// options are the flags every create subcommand shares.
type options struct {
	export       bool
	interval     time.Duration
	labels       []string
	fetchTimeout time.Duration
}

// env is what a create subcommand works with.
type env struct {
	o       *options
	streams genericiooptions.IOStreams
	deps    *clideps.Deps
	p       output.Progress
}

// NewCommand returns `weir create` with its subcommands.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create or update sources and resources",
		Long:  "The create sub-commands generate sources and resources.",
		PersistentPreRunE: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 {
				return fmt.Errorf("name is required")
			}
			if !validName.MatchString(args[0]) {
				return fmt.Errorf("name '%s' is invalid, it should adhere to standard defined in RFC 1123, the name can only contain alphanumeric characters or '-'", args[0])
			}
			return nil
		},
	}
	f := cmd.PersistentFlags()
	f.DurationVar(&o.interval, "interval", time.Minute, "source sync interval")
	f.BoolVar(&o.export, "export", false, "export in YAML format to stdout")
	f.StringSliceVar(&o.labels, "label", nil,
		"set labels on the resource (can specify multiple labels with commas: label1=value1,label2=value2)")

	e := &env{o: o, streams: streams, deps: deps, p: output.Progress{W: streams.ErrOut}}
	source := &cobra.Command{Use: "source", Short: "Create or update sources", Long: "The create source sub-commands generate sources."}
	source.PersistentFlags().DurationVar(&o.fetchTimeout, "fetch-timeout", 0,
		"set a timeout for fetch operations performed by source-controller (e.g. 'git clone' or 'helm repo update')")
	source.AddCommand(newGitCommand(e), newHelmCommand(e), newChartCommand(e), newOCICommand(e), newBucketCommand(e))
	secret := &cobra.Command{Use: "secret", Short: "Create or update Kubernetes secrets",
		Long: "The create secret sub-commands generate Kubernetes secrets specific to Flux."}
	secret.AddCommand(newSecretGitCommand(e), newSecretOCICommand(e), newSecretTLSCommand(e), newSecretReceiverCommand(e),
		newSecretGitHubAppCommand(e), newSecretHelmCommand(e), newSecretNotationCommand(e), newSecretProxyCommand(e))
	cmd.AddCommand(source, newKustomizationCommand(e), newHelmReleaseCommand(e), newReceiverCommand(e), newAlertProviderCommand(e), newAlertCommand(e), secret, newTenantCommand(e),
		newImageCommand(e))
	return cmd
}

var validName = regexp.MustCompile(`^[a-z0-9]([a-z0-9\-]){0,61}[a-z0-9]$`)

// labels parses --label, with the flux CLI's checks and messages.
func (e *env) labels() (map[string]string, error) {
	out := map[string]string{}
	for _, l := range e.o.labels {
		parts := strings.Split(l, "=")
		if len(parts) != 2 {
			return nil, fmt.Errorf("invalid label format '%s', must be key=value", l)
		}
		if errs := validation.IsQualifiedName(parts[0]); len(errs) > 0 {
			return nil, fmt.Errorf("invalid label '%s': %v", parts[0], errs)
		}
		if errs := validation.IsValidLabelValue(parts[1]); len(errs) > 0 {
			return nil, fmt.Errorf("invalid label value '%s': %v", parts[1], errs)
		}
		out[parts[0]] = parts[1]
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// context bounds a command by --timeout.
func (e *env) context(c *cobra.Command) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Context(), e.deps.Timeout)
}

// toUnstructured converts a typed object (with its TypeMeta set) into what
// is applied and exported: no status, no creationTimestamp.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	delete(m, "status")
	if spec, ok := m["spec"].(map[string]any); ok && len(spec) == 0 {
		delete(m, "spec")
	}
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	return &unstructured.Unstructured{Object: m}, nil
}

// export prints a Flux object as `weir export` does.
func (e *env) export(obj runtime.Object) error {
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	return exportcmd.Write(e.streams.Out, u)
}

// writeYAML prints any object (a Secret, a Namespace) as one YAML document.
func writeYAML(w io.Writer, obj runtime.Object) error {
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "---\n%s", data)
	return err
}

// apply creates or updates obj with server-side apply and reports whether
// it was created.
func apply(ctx context.Context, c client.Client, obj runtime.Object) (created bool, err error) {
	u, err := toUnstructured(obj)
	if err != nil {
		return false, err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(u.GroupVersionKind())
	err = c.Get(ctx, client.ObjectKeyFromObject(u), live)
	switch {
	case apierrors.IsNotFound(err):
		created = true
	case err != nil:
		return false, fmt.Errorf("reading %s %s: %w", u.GetKind(), client.ObjectKeyFromObject(u), err)
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("applying %s %s: %w", u.GetKind(), client.ObjectKeyFromObject(u), err)
	}
	return created, nil
}

// applyAndWait is the flux CLI's create sequence for a reconciled object
// called noun in messages ("GitRepository source"): apply, report created
// or updated, wait for readiness, report completion. It returns the ready
// object.
func (e *env) applyAndWait(ctx context.Context, c client.Client, k kinds.Kind, noun string, obj client.Object,
	completed string) (*unstructured.Unstructured, error) {
	return e.applyAndWaitAs(ctx, c, k, createNames{noun: noun, created: noun, completed: completed}, obj)
}

// applyAndWaitAs is applyAndWait in the words n gives.
func (e *env) applyAndWaitAs(ctx context.Context, c client.Client, k kinds.Kind, n createNames,
	obj client.Object) (*unstructured.Unstructured, error) {
	e.p.Actionf("applying %s", n.noun)
	created, err := apply(ctx, c, obj)
	if err != nil {
		return nil, err
	}
	if created {
		e.p.Successf("%s created", n.created)
	} else {
		e.p.Successf("%s updated", n.created)
	}
	e.p.Waitingf("waiting for %s reconciliation", n.noun)
	u, err := k.WaitReady(ctx, c, client.ObjectKeyFromObject(obj), e.deps.Poll())
	if err != nil {
		return nil, err
	}
	e.p.Successf("%s", n.completed)
	return u, nil
}

// fetched prints a source's revision once it is ready.
func (e *env) fetched(u *unstructured.Unstructured, missing string) error {
	rev, ok, _ := unstructured.NestedString(u.Object, "status", "artifact", "revision")
	if !ok {
		return fmt.Errorf("%s", missing)
	}
	e.p.Successf("fetched revision: %s", rev)
	return nil
}
