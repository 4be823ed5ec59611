from .cli.main import run

if __name__ == "__main__":  # not when multiprocessing's spawn imports this module as __mp_main__
    run()
