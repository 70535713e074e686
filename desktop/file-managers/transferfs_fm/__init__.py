"""transferfs in the file manager: the logic shared by the Nautilus, Nemo and Caja extensions."""
