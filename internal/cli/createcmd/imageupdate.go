package createcmd

import (
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

type imageUpdateOptions struct {
	gitRepoName, gitRepoNamespace, gitRepoPath string
	checkoutBranch, pushBranch                 string
	commitTemplate, authorName, authorEmail    string
	signingKeySecret, signingKeyType           string
}

func newImageUpdateCommand(e *env) *cobra.Command {
	o := &imageUpdateOptions{}
	cmd := &cobra.Command{
		Use:   "update [name]",
		Short: "Create or update an ImageUpdateAutomation object",
		Long: "The create image update command generates an ImageUpdateAutomation resource.\n" +
			"An ImageUpdateAutomation object specifies an automated update to images\nmentioned in YAMLs in a git repository.",
		Example: `  # Configure image updates for the main repository created by weir bootstrap
  weir create image update flux-system \
    --git-repo-ref=flux-system \
    --git-repo-path="./clusters/my-cluster" \
    --checkout-branch=main \
    --author-name=flux \
    --author-email=flux@example.com \
    --commit-template="{{range .Changed.Changes}}{{println .NewValue}}{{end}}"

  # Configure image updates to push changes to a different branch, if the branch doesn't exists it will be created
  weir create image update flux-system \
    --git-repo-ref=flux-system \
    --git-repo-path="./clusters/my-cluster" \
    --checkout-branch=main \
    --push-branch=image-updates \
    --author-name=flux \
    --author-email=flux@example.com

  # Sign the commits with the OpenPGP key in the Secret signing-key (key git.asc)
  weir create image update flux-system \
    --git-repo-ref=flux-system \
    --checkout-branch=main \
    --author-name=flux \
    --author-email=flux@example.com \
    --signing-key-secret=signing-key`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createImageUpdate(c, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.gitRepoName, "git-repo-ref", "", "the name of a GitRepository resource with details of the upstream Git repository")
	f.StringVar(&o.gitRepoNamespace, "git-repo-namespace", "", "the namespace of the GitRepository resource, defaults to the ImageUpdateAutomation namespace")
	f.StringVar(&o.gitRepoPath, "git-repo-path", "", "path to the directory containing the manifests to be updated, defaults to the repository root")
	f.StringVar(&o.checkoutBranch, "checkout-branch", "", "the branch to checkout")
	f.StringVar(&o.pushBranch, "push-branch", "", "the branch to push commits to, defaults to the checkout branch if not specified")
	f.StringVar(&o.commitTemplate, "commit-template", "", "a template for commit messages")
	f.StringVar(&o.authorName, "author-name", "", "the name to use for commit author")
	f.StringVar(&o.authorEmail, "author-email", "", "the email to use for commit author")
	f.StringVar(&o.signingKeySecret, "signing-key-secret", "", "the name of a Secret holding the key to sign commits with (git.asc for gpg, identity for ssh)")
	f.StringVar(&o.signingKeyType, "signing-key-type", "", "the type of the signing key: gpg (default) or ssh")
	return cmd
}

// check returns the flux CLI's error for the first required flag missing.
func (o *imageUpdateOptions) check() error {
	switch {
	case o.gitRepoName == "":
		return fmt.Errorf("a reference to a GitRepository is required (--git-repo-ref)")
	case o.checkoutBranch == "":
		return fmt.Errorf("the Git repository branch is required (--checkout-branch)")
	case o.authorName == "":
		return fmt.Errorf("the author name is required (--author-name)")
	case o.authorEmail == "":
		return fmt.Errorf("the author email is required (--author-email)")
	}
	switch imagev1.SigningKeyType(o.signingKeyType) {
	case "", imagev1.SigningKeyTypeGPG, imagev1.SigningKeyTypeSSH:
	default:
		return fmt.Errorf("invalid signing key type '%s', must be one of: %s, %s", o.signingKeyType, imagev1.SigningKeyTypeGPG, imagev1.SigningKeyTypeSSH)
	}
	if o.signingKeyType != "" && o.signingKeySecret == "" {
		return fmt.Errorf("--signing-key-type needs --signing-key-secret")
	}
	return nil
}

func (e *env) createImageUpdate(c *cobra.Command, objName string, o *imageUpdateOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	update := &imagev1.ImageUpdateAutomation{
		TypeMeta:   metav1.TypeMeta{APIVersion: imagev1.GroupVersion.String(), Kind: imagev1.ImageUpdateAutomationKind},
		ObjectMeta: metav1.ObjectMeta{Name: objName, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: imagev1.ImageUpdateAutomationSpec{
			SourceRef: imagev1.CrossNamespaceSourceReference{
				Kind: imagev1.GitRepositoryKind, Name: o.gitRepoName, Namespace: o.gitRepoNamespace,
			},
			GitSpec: &imagev1.GitSpec{
				Checkout: &imagev1.GitCheckoutSpec{Reference: imagev1.GitRepositoryRef{Branch: o.checkoutBranch}},
				Commit: imagev1.CommitSpec{
					Author:          imagev1.CommitUser{Name: o.authorName, Email: o.authorEmail},
					MessageTemplate: o.commitTemplate,
				},
			},
			Interval: metav1.Duration{Duration: e.o.interval},
		},
	}
	if o.signingKeySecret != "" {
		update.Spec.GitSpec.Commit.SigningKey = &imagev1.SigningKey{
			SecretRef: meta.LocalObjectReference{Name: o.signingKeySecret}, Type: imagev1.SigningKeyType(o.signingKeyType),
		}
	}
	if o.pushBranch != "" {
		update.Spec.GitSpec.Push = &imagev1.PushSpec{Branch: o.pushBranch}
	}
	if o.gitRepoPath != "" {
		update.Spec.Update = &imagev1.UpdateStrategy{Path: o.gitRepoPath, Strategy: imagev1.UpdateStrategySetters}
	}
	return e.createImageObject(c, kinds.ImageUpdateAutomation, update)
}
