"""fisk-chatops: a Slack chatops bot whose tools are the commands of fisk applications."""
