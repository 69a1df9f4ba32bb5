from reaver_nb.cli import main

raise SystemExit(main())
