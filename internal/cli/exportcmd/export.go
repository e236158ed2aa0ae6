package exportcmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/kindcmd"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// lastAppliedAnnotation is where `kubectl apply` keeps its copy of the
// object; exported YAML must not carry it into the next apply.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// NewCommand returns `weir export`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export resources in YAML format",
		Long:  "The export sub-commands export resources in YAML format.",
	}
	cmd.PersistentFlags().BoolVar(&all, "all", false, "select all resources")
	kindcmd.AddCommands(cmd, kinds.Exportable, "[name]", func(k kinds.Kind) *cobra.Command {
		var withCredentials bool
		c := &cobra.Command{
			ValidArgsFunction: kindcmd.CompleteNames(deps, k),
			Short:             "Export " + k.Kind + " objects in YAML format",
			Long:              fmt.Sprintf("The export command prints one or all (--all) %s objects of the namespace as YAML.", k.Kind),
			Args:              cobra.MaximumNArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				if !all && len(args) == 0 {
					return fmt.Errorf("%s name is required", k.Noun)
				}
				ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
				defer cancel()
				cl, err := deps.Client()
				if err != nil {
					return err
				}
				objs, err := read(ctx, cl, k, deps.Namespace(), args)
				if err != nil {
					return err
				}
				for _, u := range objs {
					if err := Write(streams.Out, u); err != nil {
						return err
					}
					if withCredentials {
						if err := writeCredentials(ctx, cl, streams.Out, u); err != nil {
							return err
						}
					}
				}
				return nil
			},
		}
		if k.Parent() == "source" {
			// flux has it on `export source`, for every source kind; those
			// without spec.secretRef export no Secret.
			c.Flags().BoolVar(&withCredentials, "with-credentials", false, "include credential secrets")
		}
		return c
	})
	return cmd
}

// writeCredentials prints, after the source u, the Secret its
// spec.secretRef names, as flux does: name, namespace, type and data only.
func writeCredentials(ctx context.Context, c client.Client, w io.Writer, u *unstructured.Unstructured) error {
	name, _, _ := unstructured.NestedString(u.Object, "spec", "secretRef", "name")
	if name == "" {
		return nil
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: u.GetNamespace(), Name: name}, secret); err != nil {
		return fmt.Errorf("failed to retrieve secret %s of %s %s: %w", name, u.GetKind(), u.GetName(), err)
	}
	out := map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata":   map[string]any{"name": name, "namespace": u.GetNamespace()},
	}
	if secret.Type != "" {
		out["type"] = string(secret.Type)
	}
	if len(secret.Data) > 0 {
		out["data"] = secret.Data
	}
	data, err := yaml.Marshal(out)
	if err != nil {
		return fmt.Errorf("encoding Secret %s: %w", name, err)
	}
	_, err = fmt.Fprintf(w, "---\n%s\n", strings.TrimSpace(string(data)))
	return err
}

func read(ctx context.Context, c client.Client, k kinds.Kind, ns string, args []string) ([]*unstructured.Unstructured, error) {
	if len(args) == 1 {
		u := k.New()
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: args[0]}, u); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("%s %s not found in %s namespace", k.Kind, args[0], ns)
			}
			return nil, fmt.Errorf("reading %s %s in %s namespace: %w", k.Kind, args[0], ns, err)
		}
		return []*unstructured.Unstructured{u}, nil
	}
	list := k.NewList()
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing %s objects in %s namespace: %w", k.Kind, ns, err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no %s objects found in %s namespace", k.Kind, ns)
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// Clean returns the parts of u worth applying again.
func Clean(u *unstructured.Unstructured) map[string]any {
	md := map[string]any{"name": u.GetName()}
	if ns := u.GetNamespace(); ns != "" {
		md["namespace"] = ns
	}
	if l := u.GetLabels(); len(l) > 0 {
		md["labels"] = l
	}
	ann := map[string]string{}
	for k, v := range u.GetAnnotations() {
		if k != lastAppliedAnnotation {
			ann[k] = v
		}
	}
	if len(ann) > 0 {
		md["annotations"] = ann
	}
	out := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": md}
	if spec, ok := u.Object["spec"]; ok {
		out["spec"] = spec
	}
	return out
}

// Write prints u cleaned, as one YAML document after a --- line.
func Write(w io.Writer, u *unstructured.Unstructured) error {
	data, err := yaml.Marshal(Clean(u))
	if err != nil {
		return fmt.Errorf("encoding %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	_, err = fmt.Fprintf(w, "---\n%s\n", strings.TrimSpace(string(data)))
	return err
}
