package createcmd

import (
	"fmt"
	"regexp"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// newImageCommand is `create image`, the image automation kinds' group.
func newImageCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "image", Short: "Create or update resources dealing with image automation",
		Long: "The create image sub-commands work with image automation objects."}
	cmd.AddCommand(newImageRepositoryCommand(e), newImagePolicyCommand(e), newImageUpdateCommand(e))
	return cmd
}

type imageRepositoryOptions struct {
	image, secretRef, certRef string
	timeout                   time.Duration
}

func newImageRepositoryCommand(e *env) *cobra.Command {
	o := &imageRepositoryOptions{}
	cmd := &cobra.Command{
		Use:   "repository [name]",
		Short: "Create or update an ImageRepository object",
		Long: "The create image repository command generates an ImageRepository resource.\n" +
			"An ImageRepository object specifies an image repository to scan.",
		Example: `  # Create an ImageRepository object to scan the alpine image repository
  weir create image repository alpine-repo --image alpine --interval 20m`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createImageRepository(c, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.image, "image", "", "the image repository to scan; e.g., library/alpine")
	f.StringVar(&o.secretRef, "secret-ref", "", "the name of a docker-registry secret to use for credentials")
	f.StringVar(&o.certRef, "cert-ref", "", "the name of a secret to use for TLS certificates")
	f.DurationVar(&o.timeout, "scan-timeout", 0, "a timeout for scanning; this defaults to the interval if not set")
	return cmd
}

func (e *env) createImageRepository(c *cobra.Command, objName string, o *imageRepositoryOptions) error {
	if o.image == "" {
		return fmt.Errorf("an image repository (--image) is required")
	}
	if _, err := name.NewRepository(o.image); err != nil {
		return fmt.Errorf("unable to parse image value: %w", err)
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	repo := &imagev1.ImageRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: imagev1.GroupVersion.String(), Kind: imagev1.ImageRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: objName, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: imagev1.ImageRepositorySpec{
			Image:    o.image,
			Interval: metav1.Duration{Duration: e.o.interval},
		},
	}
	if o.timeout != 0 {
		repo.Spec.Timeout = &metav1.Duration{Duration: o.timeout}
	}
	if o.secretRef != "" {
		repo.Spec.SecretRef = &meta.LocalObjectReference{Name: o.secretRef}
	}
	if o.certRef != "" {
		repo.Spec.CertSecretRef = &meta.LocalObjectReference{Name: o.certRef}
	}
	return e.createImageObject(c, kinds.ImageRepository, repo)
}

// createImageObject exports obj, or applies it and waits for it with the
// flux CLI's lines for the image kinds.
func (e *env) createImageObject(c *cobra.Command, k kinds.Kind, obj client.Object) error {
	if e.o.export {
		return e.export(obj)
	}
	e.p.Generatef("generating %s", k.Kind)
	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	_, err = e.applyAndWait(ctx, cl, k, k.Kind, obj, k.Kind+" reconciliation completed")
	return err
}

type imagePolicyOptions struct {
	imageRef, semver, alpha, numeric, filterRegex, filterExtract, reflectDigest string
}

func newImagePolicyCommand(e *env) *cobra.Command {
	o := &imagePolicyOptions{}
	cmd := &cobra.Command{
		Use:   "policy [name]",
		Short: "Create or update an ImagePolicy object",
		Long: "The create image policy command generates an ImagePolicy resource.\n" +
			"An ImagePolicy object calculates a \"latest image\" given an image\n" +
			"repository and a policy, e.g., semver.\n\n" +
			"The image that sorts highest according to the policy is recorded in\nthe status of the object.",
		Example: `  # Create an ImagePolicy to select the latest stable release
  weir create image policy podinfo \
    --image-ref=podinfo \
    --select-semver=">=1.0.0"

  # Create an ImagePolicy to select the latest main branch build tagged as "${GIT_BRANCH}-${GIT_SHA:0:7}-$(date +%s)"
  weir create image policy podinfo \
    --image-ref=podinfo \
    --select-numeric=asc \
    --filter-regex='^main-[a-f0-9]+-(?P<ts>[0-9]+)' \
    --filter-extract='$ts'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createImagePolicy(c, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.imageRef, "image-ref", "", "the name of an image repository object")
	f.StringVar(&o.semver, "select-semver", "", "a semver range to apply to tags; e.g., '1.x'")
	f.StringVar(&o.alpha, "select-alpha", "", "use alphabetical sorting to select image; either \"asc\" meaning select the last, or \"desc\" meaning select the first")
	f.StringVar(&o.numeric, "select-numeric", "", "use numeric sorting to select image; either \"asc\" meaning select the last, or \"desc\" meaning select the first")
	f.StringVar(&o.filterRegex, "filter-regex", "", "regular expression pattern used to filter the image tags")
	f.StringVar(&o.filterExtract, "filter-extract", "", "replacement pattern (using capture groups from --filter-regex) to use for sorting")
	f.StringVar(&o.reflectDigest, "reflect-digest", "", "the digest reflection policy to use when observing latest image tags (one of 'Never', 'IfNotPresent', 'Always'); with 'Always', --interval is how often digests are checked")
	return cmd
}

func (e *env) createImagePolicy(c *cobra.Command, objName string, o *imagePolicyOptions) error {
	if o.imageRef == "" {
		return fmt.Errorf("the name of an ImageRepository in the namespace is required (--image-ref)")
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	policy := &imagev1.ImagePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: imagev1.GroupVersion.String(), Kind: imagev1.ImagePolicyKind},
		ObjectMeta: metav1.ObjectMeta{Name: objName, Namespace: e.deps.Namespace(), Labels: labels},
		Spec:       imagev1.ImagePolicySpec{ImageRepositoryRef: meta.NamespacedObjectReference{Name: o.imageRef}},
	}
	if policy.Spec.Policy, err = o.choice(); err != nil {
		return err
	}
	if policy.Spec.FilterTags, err = o.filter(); err != nil {
		return err
	}
	switch r := imagev1.ReflectionPolicy(o.reflectDigest); r {
	case "":
	case imagev1.ReflectAlways:
		policy.Spec.DigestReflectionPolicy = r
		policy.Spec.Interval = &metav1.Duration{Duration: e.o.interval}
	case imagev1.ReflectNever, imagev1.ReflectIfNotPresent:
		policy.Spec.DigestReflectionPolicy = r
	default:
		return fmt.Errorf("invalid digest reflection policy '%s', must be one of: %s, %s, %s",
			o.reflectDigest, imagev1.ReflectNever, imagev1.ReflectIfNotPresent, imagev1.ReflectAlways)
	}
	return e.createImageObject(c, kinds.ImagePolicy, policy)
}

// choice is the policy the --select-* flags ask for: exactly one of them.
func (o *imagePolicyOptions) choice() (imagev1.ImagePolicyChoice, error) {
	var set int
	for _, v := range []string{o.semver, o.alpha, o.numeric} {
		if v != "" {
			set++
		}
	}
	if set > 1 {
		return imagev1.ImagePolicyChoice{}, fmt.Errorf("only one of --select-semver, --select-alpha or --select-numeric can be specified")
	}
	order := func(flag, v string) error {
		if v != imagev1.OrderAsc && v != imagev1.OrderDesc {
			return fmt.Errorf("--%s must be one of [%s, %s]", flag, imagev1.OrderAsc, imagev1.OrderDesc)
		}
		return nil
	}
	switch {
	case o.semver != "":
		if _, err := semver.NewConstraint(o.semver); err != nil {
			return imagev1.ImagePolicyChoice{}, fmt.Errorf("--select-semver is not a valid semver constraint: %w", err)
		}
		return imagev1.ImagePolicyChoice{SemVer: &imagev1.SemVerPolicy{Range: o.semver}}, nil
	case o.alpha != "":
		return imagev1.ImagePolicyChoice{Alphabetical: &imagev1.AlphabeticalPolicy{Order: o.alpha}}, order("select-alpha", o.alpha)
	case o.numeric != "":
		return imagev1.ImagePolicyChoice{Numerical: &imagev1.NumericalPolicy{Order: o.numeric}}, order("select-numeric", o.numeric)
	}
	return imagev1.ImagePolicyChoice{}, fmt.Errorf("a policy must be provided with either --select-semver, --select-alpha or --select-numeric")
}

// filter is --filter-regex and --filter-extract.
func (o *imagePolicyOptions) filter() (*imagev1.TagFilter, error) {
	if o.filterRegex == "" {
		if o.filterExtract != "" {
			return nil, fmt.Errorf("cannot specify --filter-extract without specifying --filter-regex")
		}
		return nil, nil
	}
	if _, err := regexp.Compile(o.filterRegex); err != nil {
		return nil, fmt.Errorf("--filter-regex is an invalid regex pattern: %w", err)
	}
	return &imagev1.TagFilter{Pattern: o.filterRegex, Extract: o.filterExtract}, nil
}
