def main():  # placeholder until the CLI lands
    pass
