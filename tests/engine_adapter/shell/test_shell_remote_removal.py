"""Removal that no undo reaches (issue 24 §E): cloud buckets and projects, forge repositories,
infrastructure, a cluster's namespaces, a container host's volumes; and discarded changes and
wipers in the work tree (`git read-tree -u --reset`, `git checkout-index -f`,
`git update-ref -d`, `fallocate --punch-hole`). All tier 4 in every spelling; a grant of the
harmless form (`fallocate -l 1G f`) never covers the destructive one.
"""

from __future__ import annotations

import pytest

from engine_adapter.shell import ApprovalGrant, classify_command, grant_prefix, grantability


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    return root


REMOTE = [
    "aws s3 rm --recursive s3://bucket",
    "aws s3 rm s3://bucket --recursive",
    "aws s3 rm s3://bucket/key",
    "aws --profile prod s3 rm --recursive s3://b",
    "aws --region us-east-1 --profile p --output json s3 rb s3://b",
    "aws s3 rb --force s3://bucket",
    "aws s3 rb s3://bucket",
    "aws s3 sync . s3://b --delete",
    "aws s3api delete-bucket --bucket b",
    "aws ec2 terminate-instances --instance-ids i-1",
    "aws rds delete-db-instance --db-instance-identifier x",
    "aws cloudformation delete-stack --stack-name x",
    "gh repo delete me/x --yes",
    "gh release delete v1",
    "gh api -X DELETE /repos/me/x",
    "gh api --method=DELETE /repos/me/x",
    "gh api -XDELETE /repos/me/x",
    "terraform destroy",
    "terraform destroy -auto-approve",
    "terraform -chdir=infra destroy",
    "terraform apply -destroy",
    "terraform apply --destroy -auto-approve",
    "terraform apply -auto-approve",
    "terraform state rm aws_instance.x",
    "terraform workspace delete prod",
    "tofu destroy",
    "pulumi destroy --yes",
    "pulumi stack rm prod",
    "kubectl delete namespace prod",
    "kubectl delete ns prod",
    "kubectl -n prod delete ns x",
    "kubectl --context=prod delete namespaces a,b",
    "kubectl delete pods --all",
    "kubectl delete pods --all -n x",
    "kubectl delete all --all",
    "kubectl delete -f app.yaml",
    "kubectl delete pods -l app=x",
    "kubectl delete pvc data",
    "kubectl delete deployment web",
    "kubectl delete pod x --force --grace-period=0",
    "kubectl delete pods -A --all",
    "kubectl replace --force -f x.yaml",
    "kubectl apply --prune -f dir",
    "oc delete project x",
    "helm uninstall release",
    "helm delete release",
    "helm un release",
    "docker system prune",
    "docker system prune -af --volumes",
    "docker volume prune",
    "docker image prune -a",
    "docker container prune",
    "docker builder prune",
    "docker volume rm data",
    "docker rm -f db",
    "docker rm -v db",
    "docker rmi -f img",
    "docker compose down -v",
    "docker compose down --volumes",
    "docker-compose down -v",
    "podman system prune",
    "gcloud projects delete my-project",
    "gcloud --project p compute instances delete vm",
    "gcloud sql instances delete db",
    "gcloud storage rm -r gs://b",
    "gsutil rm -r gs://b",
    "gsutil -m rm -r gs://b",
    "gsutil rb gs://b",
    "az group delete -n rg",
    "heroku apps:destroy x",
    "fly apps destroy x",
    "vercel remove x",
    "doctl compute droplet delete x",
    "eksctl delete cluster x",
    "firebase projects:delete x",
    "rclone purge remote:b",
    "rclone sync . remote:b",
    "s3cmd del s3://b/x",
    "minikube delete",
    "kind delete cluster",
]
REMOTE_HARMLESS = ["aws s3 ls", "aws s3 cp f s3://b/f", "aws ec2 describe-instances",
                   "gh repo view", "gh pr list", "gh api /repos/me/x", "gh api -X GET /x",
                   "terraform plan", "terraform plan -destroy", "terraform init",
                   "terraform apply", "kubectl get pods", "kubectl delete pod x",
                   "kubectl -n dev delete pod x", "kubectl apply -f x.yaml", "helm list",
                   "helm install x ./chart", "docker ps", "docker rm db", "docker rmi img",
                   "docker compose down", "docker volume ls", "gcloud projects list",
                   "gsutil ls gs://b", "az group list", "pulumi preview", "rclone ls remote:"]

WIPERS = [
    "git read-tree -u --reset HEAD",
    "git read-tree --reset -u HEAD",
    "git read-tree -mu HEAD",
    "git read-tree --reset HEAD",
    "git checkout-index -f -a",
    "git checkout-index -af",
    "git checkout-index --force --all",
    "git checkout-index --forc -a",
    "git update-ref -d HEAD",
    "git update-ref refs/heads/main HEAD~5",
    "git update-ref --stdin",
    "git symbolic-ref -d HEAD",
    "git symbolic-ref --delete HEAD",
    "git prune",
    "git prune --expire=now",
    "git gc --prune=now",
    "git gc --prune=all",
    "git submodule deinit -f x",
    "git submodule deinit --all",
    "git --no-pager checkout-index -f -a",
    "fallocate --punch-hole -o 0 -l 4096 f",
    "fallocate -p -o 0 -l 4096 f",
    "fallocate -pv -o 0 -l 4096 f",
    "fallocate -vp -l 1 f",
    "fallocate --punch -l 1 f",
    "fallocate --collapse-range -o 0 -l 4096 f",
    "fallocate -c -o 0 -l 4096 f",
    "fallocate --zero-range -l 1M f",
    "fallocate -z -l 1M f",
    "fallocate --zero -l 1M f",
    "fallocate --insert-range -o 0 -l 4096 f",
    "fallocate -i -l 4096 f",
    "nice fallocate -p -l 1 f",
    "/usr/bin/fallocate -p -l 1 f",
]
WIPERS_HARMLESS = ["git read-tree HEAD", "git read-tree --prefix=x/ HEAD", "git checkout-index -a",
                   "git checkout-index -n -a", "git prune -n", "git prune --dry-run", "git gc",
                   "git gc --auto", "git submodule deinit x", "git symbolic-ref HEAD",
                   "fallocate -l 1G f", "fallocate -o 0 -l 10 f", "fallocate -d f",
                   "fallocate --dig-holes f", "fallocate -n -l 1M f"]


@pytest.mark.parametrize("command", REMOTE + WIPERS)
def test_lasting_removal_is_tier_4(workspace, command) -> None:
    found = classify_command(command, workspace)
    assert found.tier == 4, found.reason


@pytest.mark.parametrize("command", REMOTE_HARMLESS + WIPERS_HARMLESS)
def test_reading_and_plain_changes_stay_tier_3(workspace, command) -> None:
    found = classify_command(command, workspace)
    assert found.tier == 3, found.reason


@pytest.mark.parametrize("command", [c for c in WIPERS if c.startswith("fallocate")]
                         + ["aws s3 rb --force s3://b", "gh repo delete x",
                            "terraform destroy", "docker system prune",
                            "kubectl delete ns x", "git update-ref -d HEAD"])
def test_a_grant_of_the_harmless_form_never_covers_the_destructive_one(workspace,
                                                                       command) -> None:
    program = command.split()[0]
    tool_input = {"command": command}
    tier = classify_command(command, workspace).tier
    verdict = grantability("shell", tool_input, tier)
    assert not verdict.grantable
    for prefix in {program, " ".join(command.split()[:2]), " ".join(command.split()[:3]),
                   grant_prefix("shell", tool_input)}:
        grant = ApprovalGrant(tool="shell", prefix=prefix, tier=3)
        assert not grant.matches("shell", grant_prefix("shell", tool_input), tier)


def test_fallocate_grant_prefix_is_blank_for_the_destructive_options() -> None:
    assert grant_prefix("shell", {"command": "fallocate -l 1G f"}) == "fallocate"
    for command in ("fallocate -p -l 1 f", "fallocate --punch-hole -l 1 f",
                    "fallocate --collapse -l 1 f", "fallocate -z -l 1 f",
                    "fallocate --insert-range -l 1 f"):
        assert grant_prefix("shell", {"command": command}) == "", command
