"""datafactory: the exporter from agent rollouts (Layers 1 and 2) to training records (Layer 3)."""
