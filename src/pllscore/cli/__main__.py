from pllscore.cli import main

main()
