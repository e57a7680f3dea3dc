"""BigBird's DNA pretraining (App. F.1): MLM + NSP objective, `pretrain` recipe, held-out evaluation."""
